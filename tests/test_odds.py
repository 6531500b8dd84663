"""Win odds: the dynamic program, the shipped table, the table file checks, `crib odds`, and the
winprob reward."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from crib_cli.main import app
from crib_env import fast, raw_env
from crib_env.cards import JACK, RANK_ARRAY
from crib_env.odds import (
    DEFAULT_TABLE,
    OddsTableError,
    default_table,
    load_table,
    save_table,
    winprob_potential,
)
from crib_env.odds_dp import build_table, dealer_table, win_from_dealer
from crib_env.single import SingleAgentCribbageEnv
from crib_env.vector import CribbageVectorEnv

runner = CliRunner()

# Two traces to target 3: the dealer pegs 2; or the pone pegs 1, then the dealer 1.
TINY = np.array([[2, 0], [-1, 1]])
# V[x, y] (dealer on x, pone on y) worked out by hand, from the highest scores down:
# V[2,2] = (1 + 0)/2; V[2,1] = V[2,0] = 1; V[1,2] = (1 + 0)/2; V[1,1] = (1 + (1 - V[2,2]))/2;
# V[0,2] = ((1 - V[2,2]) + 0)/2; V[1,0] = (1 + (1 - V[1,2]))/2; V[0,1] = ((1 - V[1,2]) + (1 - V[2,1]))/2;
# V[0,0] = ((1 - V[0,2]) + (1 - V[1,1]))/2
TINY_V = np.array([[0.5, 0.25, 0.25],
                   [0.75, 0.75, 0.5],
                   [1.0, 1.0, 0.5]])


def test_dynamic_program_matches_the_hand_computation():
    np.testing.assert_allclose(dealer_table(TINY, target=3), TINY_V)


def test_the_game_ends_the_instant_a_score_reaches_the_target():
    # the pone's 1 comes first: from 1-2 (dealer 1, pone 2) the pone wins before the dealer's 5
    V = dealer_table(np.array([[-1, 5]]), target=3)
    assert V[1, 2] == 0.0
    assert V[2, 1] == 1.0  # dealer on 2 takes the 5 after the pone's 1 leaves it on 2


def test_win_table_roles_are_complementary():
    win = win_from_dealer(TINY_V)
    assert win[1, 2, 1] == TINY_V[1, 2]
    assert win[2, 1, 0] == 1.0 - TINY_V[1, 2]  # the pone on 2 against the dealer on 1


def test_build_table_reports_a_batch_means_standard_error():
    rng = np.random.default_rng(0)
    events = rng.integers(-3, 4, size=(400, 4))
    events[:, 0] = 1  # every deal scores
    win, stderr = build_table(events, target=5, batches=4)
    assert win.shape == stderr.shape == (5, 5, 2)
    assert (stderr > 0).any() and np.isfinite(stderr).all()
    with pytest.raises(ValueError, match="batches must be >= 2"):
        build_table(events, target=5, batches=1)


def test_a_trace_that_scores_nothing_is_refused():
    with pytest.raises(ValueError, match="at least one point"):
        dealer_table(np.array([[1, 0], [0, 0]]), target=5)


@pytest.mark.slow  # 2,400 standard-vs-standard deals: about 14 s
def test_heels_is_the_first_event_of_a_deal_with_a_jack_starter():
    from agents.odds_games import traces

    S = fast.new_state(1)
    jacks = []
    for seed in range(400):
        fast.init_game(S, 0, seed, 121, seed % 2, True)
        if RANK_ARRAY[S[0, fast.NEXT_STARTER]] == JACK:
            jacks.append(seed)
    assert jacks
    events = traces(np.array(jacks))
    assert (events[:, 0] >= 2).all()  # the dealer's 2 for his heels, possibly nothing before it
    others = traces(np.arange(2000))
    dealer = np.where(others > 0, others, 0).sum(axis=1).mean()
    pone = np.where(others < 0, -others, 0).sum(axis=1).mean()
    assert 15.0 < dealer < 17.5 and 9.0 < pone < 11.5  # standard vs standard: about 16 and 10


# -- the shipped table ---------------------------------------------------------------------------

def test_shipped_table_header_and_precision():
    table = default_table()
    assert table.header["strategy"] == "standard vs standard"
    assert table.header["traces"] >= 100_000
    assert table.stderr.max() < 0.005  # under half a percentage point in every cell


def test_first_dealer_edge_matches_published_figure():
    p = default_table().win_probability(0, 0, dealer=True)
    assert 0.55 <= p <= 0.565  # published: the first dealer wins about 55.5-56%


def test_decided_positions_are_one_or_zero():
    table = default_table()
    assert table.win_probability(121, 120, dealer=False) == 1.0
    assert table.win_probability(0, 121, dealer=True) == 0.0
    assert table.standard_error(121, 3, dealer=True) == 0.0
    with pytest.raises(ValueError, match="only one side can win"):
        table.win_probability(121, 121, dealer=True)
    with pytest.raises(ValueError, match="score must be in 0..121"):
        table.win_probability(122, 0, dealer=True)


def test_symmetry_of_the_shipped_table():
    win = default_table().win
    # the two players of one position: chances add up to 1
    np.testing.assert_allclose(win[:, :, 1] + win[:, :, 0].T, 1.0, atol=1e-6)
    # equal scores: dealing is worth something early; near the end the pone, who counts first and
    # needs a few points, is the favourite
    assert (np.diagonal(win[:, :, 1])[:80] > 0.5).all()
    assert win[115, 115, 1] < 0.5
    # one point more never costs more than noise
    assert (np.diff(win, axis=0) > -0.005).all()


def test_lookup_is_fast():
    import time

    table = default_table()
    start = time.perf_counter()
    for i in range(10_000):
        table.win_probability(i % 121, 60, dealer=bool(i & 1))
    assert (time.perf_counter() - start) / 10_000 < 50e-6


# -- bad table files -----------------------------------------------------------------------------

def _write(path, win=None, stderr=None, header=None):
    win = np.full((121, 121, 2), 0.5) if win is None else win
    stderr = np.zeros_like(win) if stderr is None else stderr
    save_table(path, win, stderr, {"strategy": "test", "traces": 1, "seed": 0, **(header or {})})


def test_missing_table_is_refused(tmp_path):
    with pytest.raises(OddsTableError, match="not found; build it with `crib odds build`"):
        load_table(tmp_path / "none.npz")


def test_corrupt_table_is_refused(tmp_path):
    path = tmp_path / "bad.npz"
    path.write_bytes(b"not a table")
    with pytest.raises(OddsTableError, match="not a readable table file"):
        load_table(path)


def test_table_with_bad_values_is_refused(tmp_path):
    path = tmp_path / "t.npz"
    win = np.full((121, 121, 2), 0.5)
    win[3, 4, 1] = 1.5
    _write(path, win=win)
    with pytest.raises(OddsTableError, match="outside 0..1"):
        load_table(path)
    _write(path, win=np.full((121, 120, 2), 0.5), stderr=np.zeros((121, 120, 2)))
    with pytest.raises(OddsTableError, match="shape"):
        load_table(path)
    win = np.full((121, 121, 2), 0.5)
    win[10, 20, 1] = 0.6  # its partner win[20, 10, 0] stays 0.5
    _write(path, win=win)
    with pytest.raises(OddsTableError, match="do not add up to 1"):
        load_table(path)


def test_table_of_another_format_version_is_refused(tmp_path):
    path = tmp_path / "t.npz"
    with open(path, "wb") as f:
        np.savez(f, header=np.array(json.dumps({"format": "crib-win-odds", "version": 99, "target": 121,
                                                 "strategy": "x", "traces": 1, "seed": 0})),
                 win=np.full((121, 121, 2), 0.5, np.float32), stderr=np.zeros((121, 121, 2), np.float32))
    with pytest.raises(OddsTableError, match="version 99"):
        load_table(path)


# -- crib odds -----------------------------------------------------------------------------------

def test_cli_lookup_json_contract():
    result = runner.invoke(app, ["odds", "95", "100", "--dealer", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["score"] == 95 and report["opponent_score"] == 100 and report["dealer"] is True
    assert report["win_probability"] == default_table().win_probability(95, 100, True)
    assert 0 < report["stderr"] < 0.005


def test_cli_needs_the_dealer_and_a_table(tmp_path):
    result = runner.invoke(app, ["odds", "95", "100"])
    assert result.exit_code == 2 and "--dealer" in result.output
    result = runner.invoke(app, ["odds", "95", "100", "--pone", "--table", str(tmp_path / "x.npz")])
    assert result.exit_code == 2 and "not found" in result.output
    result = runner.invoke(app, ["odds", "130", "100", "--pone"])
    assert result.exit_code == 2 and "SCORE must be in 0..121" in result.output


def test_cli_plot_writes_a_png(tmp_path):
    result = runner.invoke(app, ["odds", "--plot", str(tmp_path / "odds.png")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "odds.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow
def test_cli_build_writes_a_loadable_table(tmp_path):
    out = tmp_path / "odds.npz"
    result = runner.invoke(app, ["odds", "build", "--traces", "2000", "--seed", "3", "--output", str(out)])
    assert result.exit_code == 0, result.output
    table = load_table(out)
    assert table.header["traces"] == 2000 and table.header["seed"] == 3
    assert out != DEFAULT_TABLE


# -- reward="winprob" ----------------------------------------------------------------------------

def test_winprob_rewards_sum_to_the_result_in_the_aec_env():
    env = raw_env(reward="winprob")
    for seed in range(3):
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        total = dict.fromkeys(env.agents, 0.0)
        steps_with_reward = 0
        while not env.terminations["player_0"]:
            mask = env.observe(env.agent_selection)["action_mask"]
            env.step(int(rng.choice(np.flatnonzero(mask))))
            for agent, r in env.rewards.items():
                total[agent] += r
            steps_with_reward += env.rewards["player_0"] != 0.0
        winner = 0 if env.unwrapped.scores["player_0"] == 121 else 1
        assert total["player_0"] == pytest.approx(1.0 if winner == 0 else -1.0, abs=1e-9)
        assert total["player_1"] == pytest.approx(-total["player_0"], abs=1e-9)
        assert steps_with_reward > 10  # shaped along the way, not only at the end


def test_winprob_step_reward_is_the_tables_change():
    env = raw_env(reward="winprob")
    phi = winprob_potential(121)
    env.reset(seed=5, options={"first_dealer": "player_0"})
    rng = np.random.default_rng(0)
    potential = 0.0
    while not env.terminations["player_0"]:
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
        s = env.unwrapped.scores
        dealer = env.unwrapped.dealer
        now = phi[s["player_0"], s["player_1"], int(dealer != "player_0")]
        assert env.rewards["player_0"] == pytest.approx(now - potential)
        potential = now


def test_winprob_rewards_sum_to_the_result_in_the_single_and_vector_envs():
    single = SingleAgentCribbageEnv(reward="winprob")
    for seed in range(3):
        single.reset(seed=seed)
        total, done = 0.0, False
        while not done:
            _, r, done, _, _ = single.step(int(np.flatnonzero(single.action_masks())[0]))
            total += r
        won = single.game_env.unwrapped.scores[single.learner] == 121
        assert total == pytest.approx(1.0 if won else -1.0, abs=1e-9)
    vec = CribbageVectorEnv(4, reward="winprob")
    vec.reset(seed=2)
    totals, results = np.zeros(4), []
    while len(results) < 6:
        actions = np.array([np.flatnonzero(m)[0] for m in vec.action_masks()])
        _, rewards, done, _, info = vec.step(actions)
        totals += rewards
        for b in np.flatnonzero(done):
            own, opp = info["final_scores"][b]
            results.append((totals[b], 1.0 if own > opp else -1.0))
            totals[b] = 0.0
    for total, result in results:
        assert total == pytest.approx(result, abs=1e-5)  # float32 rewards


def test_winprob_is_refused_outside_a_121_game():
    with pytest.raises(ValueError, match="needs episode='game'"):
        raw_env(reward="winprob", episode="deal")
    with pytest.raises(ValueError, match="needs target_score 121"):
        raw_env(reward="winprob", target_score=61)
    with pytest.raises(ValueError, match="needs episode='game'"):
        CribbageVectorEnv(2, reward="winprob", episode="deal")


def test_training_config_accepts_winprob():
    from training.config import RunConfig

    cfg = RunConfig.model_validate({"name": "t", "env": {"reward": "winprob", "episode": "game"}})
    assert cfg.env.reward == "winprob"
    with pytest.raises(ValueError, match="winprob needs env.episode: game"):
        RunConfig.model_validate({"name": "t", "env": {"reward": "winprob", "episode": "deal"}})


# -- the evaluator -------------------------------------------------------------------------------

def test_deal_win_probability_sums_to_the_result_less_the_opening_chance():
    from crib_env.game import Game
    from training.evaluate import deal_win_probability

    game = Game(seed=4, first_dealer=0)
    rng = np.random.default_rng(4)
    while game.winner is None:
        game.step(int(rng.choice(np.flatnonzero(game.legal_mask()))), game.to_move)
    table = default_table()
    for seat in (0, 1):
        (dealer_sum, dealer_deals, pone_sum, pone_deals,
         show, discards, play, laid) = deal_win_probability(game, seat)
        assert dealer_deals + pone_deals == len(game.records)
        opening = table.win_probability(0, 0, dealer=seat == 0)
        result = 1.0 if game.winner == seat else 0.0
        assert dealer_sum + pone_sum == pytest.approx(result - opening)
        # by decision: what is left is the heels, worked out here on its own
        heels, board = 0.0, [0, 0]
        for record in game.records:
            deals = record.dealer == seat
            cut = board.copy()
            cut[record.dealer] = min(cut[record.dealer] + record.heels, 121)
            heels += (table.win_probability(cut[seat], cut[1 - seat], dealer=deals)
                      - table.win_probability(board[seat], board[1 - seat], dealer=deals))
            board = [min(board[p] + record.points(p), 121) for p in (0, 1)]
        assert show + play + heels == pytest.approx(result - opening)
        assert discards == 2 * len(game.records)
        assert laid == sum(r.laid[seat] for r in game.records)
        assert 4 * (len(game.records) - 1) < laid <= 4 * len(game.records)
    assert deal_win_probability(Game(seed=1, target=61), 0) is None  # not the table's game


def test_both_engines_count_the_cards_each_player_laid():
    """``DealRecord.laid`` (what the per-decision figure divides by) is the same on the compiled
    core and the plain engine over the same games, 4 each in a completed deal."""
    from agents.standard import StandardAgent
    from training.batch_play import play_games
    from training.evaluate import game_plan, play_game

    plans = [game_plan(3, i, duplicate=True) for i in range(4)]  # the same deals on both
    fast_games = play_games(StandardAgent(seed=1), StandardAgent(seed=2), plans)
    for plan, fast_game in zip(plans, fast_games, strict=True):
        game = play_game(StandardAgent(seed=1), StandardAgent(seed=2), plan)
        assert [(r.laid, r.pegging, r.hand, r.crib) for r in fast_game.records] == \
            [(r.laid, r.pegging, r.hand, r.crib) for r in game.records]
        assert all(r.laid == [4, 4] for r in game.records if r.completed)


def test_cli_flags_endgame_cells_as_approximate():
    near = runner.invoke(app, ["odds", "118", "116", "--pone"])
    far = runner.invoke(app, ["odds", "50", "60", "--pone"])
    assert near.exit_code == far.exit_code == 0
    assert "neutral play" in near.output and "neutral play" not in far.output


def test_standard_endgame_reads_the_table_for_121_only():
    from agents.endgame import win_table

    np.testing.assert_array_equal(win_table(121), default_table().win)
    model = win_table(61)  # no table for 61: the per-deal model
    assert model.shape == (61, 61, 2) and 0.5 < model[0, 0, 1] < 0.6
