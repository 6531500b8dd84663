"""The rollout teacher (training.algos.rollout_teacher) and the advantage loss it is learned with."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from agents.endgame import win_table
from agents.learned import load_learned_agent
from agents.registry import CHAMPION_PATH, SHIPPED_CHECKPOINTS
from crib_env import fast
from crib_env.game import Game, Phase
from crib_env.observation import SCORE_SCALE, SLICES, phase_column
from training.algos.distill import advantage_losses, imitation_step, legal_logits
from training.algos.rollout_teacher import (
    RolloutSettings,
    play_out,
    record_rollout_chunk,
    solved_out,
    throw_rows,
)
from training.config_file import parse_config
from training.preflight import check_named_agents

WINS = win_table(121)


def _play_rows(n: int, near_end: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Rows of single-deal games in the play, some cards laid at random, each with one legal card
    laid in a copy per legal card; returns (rows, the seat that laid the candidate)."""
    rows, seats = [], []
    for seed in range(n):
        rng = np.random.default_rng(seed)
        game = Game(seed=seed, single_deal=True, first_dealer=int(rng.integers(2)))
        if near_end:
            game.scores = [int(rng.integers(116, 121)), int(rng.integers(116, 121))]
        while game.phase == Phase.DISCARD:
            game.step(int(rng.choice(game.legal_actions())))
        for _ in range(int(rng.integers(0, 3))):
            if game.phase == Phase.PLAY:
                game.step(int(rng.choice(game.legal_actions())))
        if game.phase != Phase.PLAY:
            continue
        S = fast.new_state(1)
        fast.load_game(S, 0, game)
        for card in game.legal_actions():
            row = S.copy()
            fast.apply_action(row, 0, card)
            rows.append(row[0])
            seats.append(game.to_move)
    return np.array(rows), np.array(seats, dtype=np.int64)


def test_rollouts_of_all_rows_together_equal_one_row_at_a_time():
    agent = load_learned_agent(CHAMPION_PATH)
    rows, seats = _play_rows(12)
    together = play_out(agent, rows, seats, WINS, np.random.default_rng(0), 1e-4)
    alone = [play_out(agent, rows[i:i + 1], seats[i:i + 1], WINS, np.random.default_rng(0), 1e-4)
             for i in range(len(rows))]
    assert len(rows) > 20
    assert np.allclose(together, np.concatenate(alone))
    assert ((together >= 0) & (together <= 1)).all()


@pytest.mark.parametrize("seed", range(8))
def test_a_solved_value_is_the_minimax_of_the_real_deal_for_the_seat_that_laid_the_card(seed):
    """``solve=1`` values each legal card of a real row by best play of both players with every
    card known, for whichever seat lays it (the solver itself values seat 0)."""
    from test_search import _loaded_play_position, _python_value

    game, S = _loaded_play_position(seed, cards_played=3)
    player = game.to_move
    rows, expected = [], []
    for card in game.legal_actions():
        row = S.copy()
        fast.apply_action(row, 0, card)
        rows.append(row[0])
        child = game.clone()
        child.step(card)
        expected.append(_python_value(child, player))
    values = solved_out(np.array(rows), np.full(len(rows), player, dtype=np.int64), WINS)
    # the win table's two sides agree to 3e-8 (its chance for one seat is 1 less the other's)
    assert values == pytest.approx(expected, abs=1e-7)


def test_a_solve_teacher_values_the_same_games_as_rollouts_do_and_refuses_an_opponent():
    """The games and decisions of a ``solve=1`` recording are those of the rollouts teacher with
    the same seed (only the values differ); every valued card has a chance to win in 0..1."""
    teacher = "rollouts:net=champion"
    solved = record_rollout_chunk(f"{teacher},solve=1", "standard", seed=5, number=0, games=3)
    rolled = record_rollout_chunk(teacher, "standard", seed=5, number=0, games=3)
    assert np.array_equal(solved["obs"], rolled["obs"])
    assert np.array_equal(np.isnan(solved["margins"]), np.isnan(rolled["margins"]))
    valued = solved["margins"][~np.isnan(solved["margins"])]
    assert valued.size > 50 and ((valued >= 0) & (valued <= 1)).all()
    assert not np.allclose(valued, rolled["margins"][~np.isnan(rolled["margins"])])
    with pytest.raises(ValueError, match="solve values the play without rollouts"):
        RolloutSettings.parse("rollouts:solve=1,opponent=rival")


def test_a_rival_in_the_rollouts_plays_the_opponents_seat_row_by_row_alike():
    """With ``rival`` (standard: deterministic, no memory) the opponent's cards are standard's,
    the same for the rows together as one at a time, and the values are not the network's."""
    from agents.standard import StandardAgent

    agent = load_learned_agent(CHAMPION_PATH)
    rows, seats = _play_rows(12)
    rng = np.random.default_rng(0)
    together = play_out(agent, rows, seats, WINS, rng, 1e-4, StandardAgent())
    alone = [play_out(agent, rows[i:i + 1], seats[i:i + 1], WINS, rng, 1e-4, StandardAgent())
             for i in range(len(rows))]
    assert np.allclose(together, np.concatenate(alone))
    as_network = play_out(agent, rows, seats, WINS, np.random.default_rng(0), 1e-4)
    assert not np.allclose(together, as_network)


def test_a_network_standing_in_for_the_rival_lays_its_highest_logit_in_the_rollouts():
    """``opponent=PATH``: the real games are the same as with the rival itself in the rollouts,
    and each legal card's value is that of the rollout with the named network's highest logit in
    the opponent's seat (``play_out`` with that network as the rival), not the rival's."""
    model = SHIPPED_CHECKPOINTS / "distilled"
    teacher = "rollouts:net=champion"
    by_model = record_rollout_chunk(f"{teacher},opponent={model}", "standard", seed=5, number=0,
                                    games=3)
    by_rival = record_rollout_chunk(f"{teacher},opponent=rival", "standard", seed=5, number=0,
                                    games=3)
    assert np.array_equal(by_model["obs"], by_rival["obs"])
    assert not np.array_equal(by_model["margins"], by_rival["margins"], equal_nan=True)
    agent, stand_in = load_learned_agent(CHAMPION_PATH), load_learned_agent(model)
    rows, seats = _play_rows(12)
    direct = play_out(agent, rows, seats, WINS, np.random.default_rng(0), 1e-4, stand_in)
    alone = [play_out(agent, rows[i:i + 1], seats[i:i + 1], WINS, np.random.default_rng(0), 1e-4,
                      stand_in) for i in range(len(rows))]
    assert np.allclose(direct, np.concatenate(alone))
    assert not np.allclose(direct, play_out(agent, rows, seats, WINS, np.random.default_rng(0),
                                            1e-4))


def test_the_expert_continued_in_a_rollout_plays_the_real_deal_on_the_networks_own_card():
    """With the expert as rival, each rollout continues a copy of the game's own expert (its
    memory of the deal and its random stream), so the rollout of the card the network really laid
    replays the real rest of the deal: its value is the real deal's outcome, to the bit, while
    the real games go on exactly as without the rollouts."""
    from agents.expert import ExpertAgent
    from training.algos.rollout_teacher import RolloutRecorder
    from training.batch_play import play_games
    from training.eval_plans import game_plan
    from training.per_row import PerRowAgent

    agent = load_learned_agent(CHAMPION_PATH)
    plans = [game_plan(3, i) for i in range(4)]
    seats = np.array([plan.agent_seat for plan in plans], dtype=np.int64)

    def expert() -> PerRowAgent:
        return PerRowAgent(ExpertAgent(sims=16, discard_sims=16), lambda b: 100 + b)

    own: list[tuple[int, int, float]] = []  # (game, deal, value of the network's own card)

    class Recorder(RolloutRecorder):
        def __call__(self, S, live, observations, masks, actions):
            before = len(self.margins)
            super().__call__(S, live, observations, masks, actions)
            if len(self.margins) == before:
                return
            mine = S[live, fast.TO_MOVE] == seats[live]
            rows = live[mine & (masks.sum(axis=1) > 1)]
            for b, values in zip(rows.tolist(), self.margins[-1], strict=True):
                if not np.isnan(values).all():
                    own.append((b, int(S[b, fast.DEAL_NO]) - 1, float(values[actions[b]])))

    rival = expert()
    recorder = Recorder(agent, seats, WINS, np.random.default_rng(0), 1.0, rival)
    games = play_games(agent, rival, plans, on_turn=recorder)
    alone = play_games(agent, expert(), plans)
    assert [g.scores for g in games] == [g.scores for g in alone]
    assert len(own) > 40
    for b, deal, value in own:
        game, seat = games[b], int(seats[b])
        scores = np.zeros(2, dtype=np.int64)
        for record in game.records[:deal + 1]:
            scores += [record.points(0), record.points(1)]
        if deal == len(game.records) - 1 and game.winner is not None:
            real = float(game.winner == seat)
        else:
            top = game.target - 1
            dealer = game.records[deal].dealer
            real = float(WINS[min(scores[seat], top), min(scores[1 - seat], top),
                              int(dealer != seat)])
        assert value == real, (b, deal)


def test_a_card_that_ends_the_game_is_worth_its_result():
    """Near the end, a candidate that ends the game is worth 1 to its winner and 0 to the loser;
    the others come from the rollout or the table, never outside 0..1."""
    agent = load_learned_agent(CHAMPION_PATH)
    rows, seats = _play_rows(60, near_end=True)
    values = play_out(agent, rows, seats, WINS, np.random.default_rng(1), 1.0)
    over = rows[:, fast.PHASE] == fast.P_GAME_OVER
    assert over.sum() > 3
    assert np.array_equal(values[over], (rows[over, fast.WINNER] == seats[over]).astype(float))
    assert ((values >= 0) & (values <= 1)).all()


def test_a_chunk_is_a_function_of_seed_and_number_and_values_every_legal_card_of_the_play():
    teacher = "rollouts:net=champion"
    first = record_rollout_chunk(teacher, "standard", seed=5, number=0, games=3)
    again = record_rollout_chunk(teacher, "standard", seed=5, number=0, games=3)
    other = record_rollout_chunk(teacher, "standard", seed=5, number=1, games=3)
    for key in ("obs", "masks", "cards", "margins"):
        assert np.array_equal(first[key], again[key], equal_nan=True)
    assert not np.array_equal(first["cards"][:40], other["cards"][:40])
    masks, margins, cards = first["masks"] > 0, first["margins"], first["cards"]
    assert (masks.sum(axis=1) > 1).all() and masks[np.arange(len(cards)), cards].all()
    discarding = first["obs"][:, phase_column(Phase.DISCARD)] > 0.5
    valued = ~np.isnan(margins).all(axis=1)
    assert np.array_equal(valued, ~discarding)  # every play decision, no discard
    assert (~np.isnan(margins[valued]) == masks[valued]).all()  # exactly the legal cards
    assert (np.nan_to_num(margins) >= 0).all() and (np.nan_to_num(margins) <= 1).all()
    # the cards are the network's own: its highest logit on each recorded observation
    agent = load_learned_agent(CHAMPION_PATH)
    assert np.array_equal(agent.act_batch(first["obs"], first["masks"]), cards)


def test_need_keeps_and_values_only_the_decisions_near_the_end():
    full = record_rollout_chunk("rollouts:net=champion", "standard", seed=5, number=0, games=6)
    near = record_rollout_chunk("rollouts:net=champion,need=40", "standard", seed=5, number=0,
                                games=6)
    to_go = np.round((full["obs"][:, SLICES["target"]] - full["obs"][:, SLICES["scores"]])
                     * SCORE_SCALE).min(axis=1)
    ending = to_go <= 40
    assert 0 < ending.sum() < len(ending)  # the games pass through both parts
    # the same games (the rollouts do not change the real game's cards): the near-end decisions
    assert np.array_equal(near["obs"], full["obs"][ending])
    assert np.array_equal(near["cards"], full["cards"][ending])
    playing = near["obs"][:, phase_column(Phase.DISCARD)] < 0.5
    assert (~np.isnan(near["margins"][playing]) == (near["masks"][playing] > 0)).all()
    with pytest.raises(ValueError, match="need"):
        RolloutSettings.parse("rollouts:need=-1")


def _play_start(seed: int, scores: tuple[int, int] = (0, 0)) -> np.ndarray:
    """A single-deal row at the start of the play, both players' throws made at random."""
    rng = np.random.default_rng(seed)
    S = fast.new_state(1)
    fast.init_game(S, 0, seed, 121, int(rng.integers(2)), True)
    S[0, fast.SCORE], S[0, fast.SCORE + 1] = scores
    while S[0, fast.PHASE] == fast.P_DISCARD:
        fast.step_game(S, 0, fast.random_action(S, 0))
    return S[0]


def test_throw_rows_replace_the_throw_and_the_cut_and_the_real_ones_are_the_real_row():
    rng = np.random.default_rng(0)
    checked = heels_wins = 0
    for seed in range(200):
        row = _play_start(seed, (119, 119) if seed % 4 == 0 else (seed % 100, 60))
        if row[fast.PHASE] != fast.P_PLAY:
            continue  # his heels won the real game at the cut
        seat = seed % 2
        copies, throws = throw_rows(row, seat, 40, rng)
        dealt = fast.cards_of(row[fast.DEALT + seat])
        unseen = [c for c in range(52) if not (row[fast.DEALT] | row[fast.DEALT + 1]) >> c & 1]
        assert len(throws) == 15 and len(copies) == 15 * 40 and len(unseen) == 40
        for i, (a, b) in enumerate(throws):
            block = copies[i * 40:(i + 1) * 40]
            assert sorted(block[:, fast.STARTER]) == unseen
            assert (block[:, fast.DISC + seat] == (1 << a) | (1 << b)).all()
            assert (block[:, fast.HAND + seat] | (1 << a) | (1 << b) == row[fast.DEALT + seat]).all()
            assert set(fast.cards_of(block[0, fast.HAND + seat])) == set(dealt) - {a, b}
        # the other seat's cards and throw are the real ones in every copy
        assert (copies[:, fast.HAND + 1 - seat] == row[fast.HAND + 1 - seat]).all()
        assert (copies[:, fast.DISC + 1 - seat] == row[fast.DISC + 1 - seat]).all()
        real = throws.index(tuple(fast.cards_of(row[fast.DISC + seat])))
        cut = list(copies[real * 40:(real + 1) * 40, fast.STARTER]).index(row[fast.STARTER])
        assert np.array_equal(copies[real * 40 + cut], row)
        # his heels: 2 to the dealer on a jack, the game won where they reach 121
        dealer, jacks = int(row[fast.DEALER]), copies[:, fast.STARTER] % 13 == 10
        base = row[fast.SCORE + dealer] - row[fast.HEELS_PTS]
        assert (copies[~jacks, fast.SCORE + dealer] == base).all()
        assert (copies[jacks, fast.SCORE + dealer] == min(base + 2, 121)).all()
        won = copies[:, fast.PHASE] == fast.P_GAME_OVER
        assert np.array_equal(won, jacks & (base + 2 >= 121))
        assert (copies[won, fast.WINNER] == dealer).all()
        heels_wins += int(won.any())
        checked += 1
    assert checked > 150 and heels_wins > 10
    # fewer cuts: drawn without replacement, the same for every throw
    copies, throws = throw_rows(_play_start(3), 0, 8, rng)
    cuts = copies[:, fast.STARTER].reshape(15, 8)
    assert (cuts == cuts[0]).all() and len(set(cuts[0])) == 8


def test_a_chunk_with_throws_values_every_discard_by_its_throws_and_no_play():
    teacher = "rollouts:net=champion,throws=4,plays=0"
    first = record_rollout_chunk(teacher, "standard", seed=5, number=0, games=3)
    again = record_rollout_chunk(teacher, "standard", seed=5, number=0, games=3)
    for key in ("obs", "masks", "cards", "margins"):
        assert np.array_equal(first[key], again[key], equal_nan=True)
    masks, margins, cards = first["masks"] > 0, first["margins"], first["cards"]
    discarding = first["obs"][:, phase_column(Phase.DISCARD)] > 0.5
    valued = ~np.isnan(margins).all(axis=1)
    assert not valued[~discarding].any()  # no play decision
    assert valued[discarding].mean() > 0.9  # all but the deals won at the cut
    assert (~np.isnan(margins[valued]) == masks[valued]).all()
    assert (np.nan_to_num(margins) >= 0).all() and (np.nan_to_num(margins) <= 1).all()
    # the first card of a throw is worth its best partner: the second decision's best value (one
    # game, so each deal's two discards are neighbours)
    one = record_rollout_chunk(teacher, "standard", seed=6, number=0, games=1)
    masks1, margins1, cards1 = one["masks"] > 0, one["margins"], one["cards"]
    firsts = np.flatnonzero(~np.isnan(margins1).all(axis=1) & (masks1.sum(axis=1) == 6))
    assert firsts.size >= 5
    for i in firsts:
        assert masks1[i + 1].sum() == 5 and not np.isnan(margins1[i + 1]).all()
        assert np.isclose(margins1[i, cards1[i]], np.nanmax(margins1[i + 1]))
    # the same games and cards as without the throws' values
    plain = record_rollout_chunk("rollouts:net=champion,plays=0", "standard", seed=5, number=0,
                                 games=3)
    assert np.array_equal(plain["cards"], cards) and np.isnan(plain["margins"]).all()


def test_settings_and_their_errors(tmp_path: Path):
    assert RolloutSettings.parse("rollouts") == RolloutSettings()
    assert RolloutSettings.parse("rollouts:net=x/y,temperature=0.5") == RolloutSettings("x/y", 0.5)
    with pytest.raises(ValueError, match="unknown setting 'sims=3'"):
        RolloutSettings.parse("rollouts:sims=3")
    with pytest.raises(ValueError, match="temperature must be positive"):
        RolloutSettings.parse("rollouts:temperature=0")
    assert RolloutSettings.parse("rollouts:opponent=rival").opponent == "rival"
    assert RolloutSettings.parse("rollouts:throws=8,plays=0") == RolloutSettings(throws=8,
                                                                                 plays=False)
    with pytest.raises(ValueError, match="throws .* must be 0 or more"):
        RolloutSettings.parse("rollouts:throws=-1")
    with pytest.raises(ValueError, match="opponent must be net, rival or a network's checkpoint"):
        RolloutSettings.parse("rollouts:opponent=expert")
    assert RolloutSettings.parse(f"rollouts:opponent={CHAMPION_PATH}").opponent == str(CHAMPION_PATH)
    assert RolloutSettings.parse("rollouts:opponent=champion").stand_in == "champion"  # as net=
    cfg = {"name": "r", "algo": "distill", "opponents": [{"agent": "standard"}],
           "distill": {"teacher": f"rollouts:net={tmp_path / 'missing'}", "advantage": 1.0},
           "train": {"engine": "python"}}
    with pytest.raises(ValueError, match="distill.teacher's net"):
        check_named_agents(parse_config(cfg))
    broken = tmp_path / "broken"  # a checkpoint folder whose weights do not load
    broken.mkdir()
    (broken / "meta.json").write_text("{}")
    stand_in = {**cfg["distill"], "teacher": f"rollouts:net=champion,opponent={broken}"}
    with pytest.raises(ValueError, match="distill.teacher's opponent"):
        check_named_agents(parse_config({**cfg, "distill": stand_in}))
    with pytest.raises(ValueError, match="distill.advantage: only the expert"):
        parse_config({**cfg, "distill": {"teacher": "standard", "advantage": 1.0}})


def test_the_advantage_loss_learns_the_gaps_between_the_values():
    masks = torch.zeros(2, 52, dtype=torch.int8)
    masks[0, [3, 4, 5]] = 1
    masks[1, [10, 11]] = 1
    margins = torch.full((2, 52), float("nan"))
    margins[0, [3, 4, 5]] = torch.tensor([0.50, 0.52, 0.46])
    logits = torch.full((2, 52), -1e9)
    logits[0, [3, 4, 5]] = torch.tensor([7.0, 8.0, 5.0])  # the values over 0.02, shifted by 7
    logits[1, [10, 11]] = torch.tensor([0.0, 3.0])
    loss, has = advantage_losses(logits, masks, margins, 0.02)
    assert has.tolist() == [True, False]
    assert loss[0].item() == pytest.approx(0.0, abs=1e-8) and loss[1].item() == 0.0
    logits[0, 5] = 6.0
    assert advantage_losses(logits, masks, margins, 0.02)[0][0].item() == pytest.approx(2 / 9)


def test_advantage_steps_move_the_logits_to_the_values_and_keep_the_card_elsewhere():
    masks = torch.zeros(2, 52, dtype=torch.int8)
    masks[:, [3, 4, 5]] = 1
    margins = torch.full((2, 52), float("nan"))
    margins[0, [3, 4, 5]] = torch.tensor([0.50, 0.52, 0.46])  # row 1: a discard, no values
    torch.manual_seed(0)
    net = torch.nn.Linear(8, 52)
    optimizer = torch.optim.Adam(net.parameters(), lr=0.05)
    inputs = torch.randn(2, 8)
    cards = torch.tensor([3, 5])  # the network's own cards: row 0's is not its best value
    for _ in range(300):
        imitation_step(net, optimizer, inputs, masks, cards, margins=margins, advantage=1.0,
                       temperature=0.02)
    logits = legal_logits(net, inputs, masks).detach()
    gaps = logits[0, [3, 4, 5]] - logits[0, 3]
    assert torch.allclose(gaps, torch.tensor([0.0, 1.0, -2.0]), atol=0.05)
    assert logits[0].argmax().item() == 4  # the best value, not the recorded card
    assert logits[1].argmax().item() == 5  # the discard keeps its card


def test_expert_iteration_with_the_rollouts_teacher(tmp_path: Path):
    """``exit.search: rollouts``: each generation's recording values the play of the previous
    generation's network, and its fit writes a loadable network; ``net=`` is the generations'."""
    import json

    from agents.checkpoint import save_checkpoint
    from agents.networks import build_network
    from training.algos.distill_recording import load_recording
    from training.config import RunConfig
    from training.train import train

    start = tmp_path / "gen0"
    cfg = {"name": "tinyroll", "seed": 1, "algo": "exit",
           "opponents": [{"agent": "greedy", "weight": 1}],
           "policy": {"arch": "cards", "features": True, "hidden": 16, "context": 16,
                      "embed": 4},
           "exit": {"generations": 2, "search": "rollouts", "start": str(start),
                    "eval_games": 2, "opponents": ["random"]},
           "distill": {"chunks": 2, "chunk_games": 2, "advantage": 1.0, "temperature": 0.02,
                       "batch_size": 64},
           "train": {"engine": "python", "total_timesteps": 256, "save_every": 128,
                     "progress_bar": False},
           "eval": {"every": 256, "games": 2, "opponents": ["random"], "final_games": 0}}
    with pytest.raises(ValueError, match="net= is set by each generation"):
        RunConfig.model_validate({**cfg, "exit": {**cfg["exit"], "search": "rollouts:net=x"}})
    run_cfg = RunConfig.model_validate(cfg)
    torch.manual_seed(0)
    kwargs = run_cfg.policy.arch_kwargs()
    save_checkpoint(start, build_network("cards", **kwargs), "cards", kwargs, {})
    run = train(run_cfg, output_dir=tmp_path / "runs")
    lines = [json.loads(x) for x in (run / "generations.jsonl").read_text().splitlines()]
    assert [x["teacher"] for x in lines] == [f"rollouts:net={start}",
                                             f"rollouts:net={lines[0]['checkpoint']}"]
    for x in lines:
        load_learned_agent(x["checkpoint"])
    data, _, _ = load_recording(run / "gen_2" / "recording", 2)
    valued = ~np.isnan(data.margins).all(axis=1)
    assert valued.any() and (~valued).any()
    # generation 2's cards are generation 1's network's own
    gen1 = load_learned_agent(lines[0]["checkpoint"])
    assert np.array_equal(gen1.act_batch(data.obs, data.masks), data.cards)
