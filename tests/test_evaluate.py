"""The evaluator (`crib evaluate`, training.evaluate): reproducible reports, honest intervals,
duplicate deals, and clear errors."""

from __future__ import annotations

import json
from itertools import combinations

import numpy as np
import pytest
from typer.testing import CliRunner

from agents.base import RandomAgent, legal_cards
from crib_cli.main import app
from crib_env.observation import decode
from crib_env.scoring import score_hands, score_play
from training.evaluate import (
    VOLATILE_KEYS,
    evaluate,
    game_plan,
    play_game,
)
from training.stats import mean_interval, wilson_interval

CONTRACT_KEYS = ("agent", "opponent", "games", "wins", "win_rate", "win_rate_ci95",
                 "points_per_game", "points_per_game_ci95")


class LowestCard:
    """Deterministic and identical on both sides: discards and plays its lowest legal card id."""

    name = "lowest"

    def act(self, observation, action_mask):
        return int(legal_cards(action_mask)[0])

    def reset(self):
        pass


class HandKeeper:
    """A deterministic, clearly-better-than-random policy: keeps the four cards with the best mean
    show over all starters and pegs the card that scores most now."""

    name = "keeper"

    def __init__(self):
        self.pending = None

    def reset(self):
        self.pending = None

    def act(self, observation, action_mask):
        view = decode(observation)
        legal = [int(c) for c in legal_cards(action_mask)]
        if len(view.hand) == 6:  # first discard: choose the pair, throw one now, one next step
            keeps = list(combinations(view.hand, 4))
            unseen = [c for c in range(52) if c not in view.hand]
            hands = np.repeat(np.array(keeps), len(unseen), axis=0)
            starters = np.tile(np.array(unseen), len(keeps))
            means = score_hands(hands, starters).reshape(len(keeps), -1).mean(axis=1)
            keep = keeps[int(np.argmax(means))]
            discard = sorted(set(view.hand) - set(keep))
            self.pending = discard[1]
            return discard[0]
        if len(view.hand) == 5 and self.pending in legal:
            return self.pending
        return max(legal, key=lambda c: (score_play([*view.sequence, c]), -c))


def _stable(report):
    return json.dumps(report.to_dict(volatile=False), sort_keys=True)


# -- statistics --

def test_wilson_interval_known_values():
    lo, hi = wilson_interval(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-4) and hi == pytest.approx(0.5962, abs=1e-4)
    lo, hi = wilson_interval(0, 20)  # stays inside [0, 1] where the Wald interval collapses
    assert lo == 0.0 and hi == pytest.approx(0.1611, abs=1e-4)


def test_mean_interval_uses_sample_std_and_limits():
    mean, lo, hi = mean_interval([1.0, 2.0, 3.0, 4.0])
    half = 1.959963984540054 * np.std([1, 2, 3, 4], ddof=1) / 2
    assert (mean, lo, hi) == pytest.approx((2.5, 2.5 - half, 2.5 + half))
    assert mean_interval([7.0], limits=(-121.0, 121.0)) == (7.0, -121.0, 121.0)


# -- reproducibility --

class RandomWithMemory(RandomAgent):
    """A random agent that does not declare itself stateless: it plays one copy per game."""

    stateless = False
    name = "random-with-memory"


@pytest.mark.parametrize("agent", ["random", RandomWithMemory()], ids=["batch", "per-row"])
def test_same_seed_gives_the_same_json_for_any_workers(agent):
    one = evaluate(agent, "random", games=44, seed=11, progress=False)
    again = evaluate(agent, "random", games=44, seed=11, progress=False)
    parallel = evaluate(agent, "random", games=44, seed=11, progress=False, workers=2)
    assert _stable(one) == _stable(again) == _stable(parallel)
    assert one.margins == parallel.margins
    other = evaluate(agent, "random", games=44, seed=12, progress=False)
    assert other.margins != one.margins  # the seed really drives the games


def test_duplicate_reports_do_not_depend_on_how_blocks_are_scheduled():
    # Blocks finishing in any order (a thread pool here; processes in the test above) merge by
    # game index, and duplicate pairs never straddle two blocks.
    from concurrent.futures import ThreadPoolExecutor

    serial = evaluate("random", "random", games=64, seed=9, duplicate=True, progress=False)
    with ThreadPoolExecutor(3) as pool:
        pooled = evaluate("random", "random", games=64, seed=9, duplicate=True, progress=False,
                          workers=3, pool=pool)
    assert _stable(serial) == _stable(pooled)
    assert serial.discard_regret is not None
    assert serial.discard_regret == pooled.discard_regret


def test_report_has_the_contract_keys_and_consistent_counts():
    report = evaluate("random", "random", games=30, seed=2, progress=False)
    data = report.to_dict()
    for key in CONTRACT_KEYS:
        assert key in data
    assert set(VOLATILE_KEYS) <= set(data)
    assert data["wins"] + data["losses"] == data["games"] == 30
    assert data["win_rate"] == pytest.approx(data["wins"] / 30)
    assert data["points_per_game"] == pytest.approx(np.mean(report.margins))
    assert data["points_per_game"] == pytest.approx(data["mean_score"]
                                                    - data["mean_opponent_score"])
    lo, hi = data["win_rate_ci95"]
    assert lo <= data["win_rate"] <= hi
    lo, hi = data["points_per_game_ci95"]
    assert lo <= data["points_per_game"] <= hi
    # every game ends with one side on exactly 121
    assert all(abs(m) <= 121 for m in report.margins)
    assert data["skunks_given"] + data["skunks_taken"] >= (
        data["double_skunks_given"] + data["double_skunks_taken"])
    for side in ("agent", "opponent"):
        dealer = data["per_deal"][side]["dealer"]
        pone = data["per_deal"][side]["pone"]
        assert dealer["crib"] > 0 and pone["crib"] == 0  # the crib is the dealer's
        assert dealer["total"] == pytest.approx(dealer["pegging"] + dealer["hand"]
                                                + dealer["crib"] + dealer["heels"], abs=1e-5)


def test_mirror_match_interval_covers_one_half():
    report = evaluate("random", "random", games=200, seed=5, progress=False, regret=False)
    lo, hi = report.win_rate_ci95
    assert lo < 0.5 < hi
    lo, hi = report.points_per_game_ci95
    assert lo < 0.0 < hi


def test_seats_and_first_deal_alternate():
    plans = [game_plan(0, i) for i in range(4)]
    assert [p.agent_deals_first for p in plans] == [True, False, True, False]
    assert sorted(p.agent_seat for p in plans) == [0, 0, 1, 1]
    report = evaluate("random", "random", games=10, seed=0, progress=False)
    expected = sum((margin > 0) == game_plan(0, i).agent_deals_first
                   for i, margin in enumerate(report.margins))
    assert report.first_dealer_wins == expected


def test_report_credits_the_right_side():
    strong = evaluate(HandKeeper(), "random", games=40, seed=1, progress=False, regret=False)
    assert strong.win_rate_ci95[0] > 0.5 and strong.points_per_game > 10
    assert strong.per_deal["agent"]["pone"]["hand"] > strong.per_deal["opponent"]["pone"]["hand"]
    weak = evaluate("random", HandKeeper(), games=40, seed=1, progress=False, regret=False)
    assert weak.win_rate_ci95[1] < 0.5 and weak.points_per_game < -10
    assert weak.skunks_taken >= weak.skunks_given


def test_agent_objects_are_not_changed_by_evaluation():
    agent = RandomAgent(seed=3)
    before = agent.rng.bit_generator.state
    evaluate(agent, "random", games=4, seed=0, progress=False)
    assert agent.rng.bit_generator.state == before


@pytest.mark.parametrize("through", ["evaluate", "play_games"])
def test_torch_runs_single_threaded_during_play_and_is_restored(through):
    # play_games holds the guard, so every caller (evaluations, recordings) plays on one thread
    import torch

    from training.batch_play import play_games
    from training.per_row import PerRowAgent

    seen = []

    class ThreadSpy(LowestCard):
        def act(self, observation, action_mask):
            seen.append(torch.get_num_threads())
            return super().act(observation, action_mask)

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        if through == "evaluate":
            evaluate(ThreadSpy(), "random", games=2, seed=0, progress=False, regret=False)
        else:
            play_games(PerRowAgent(ThreadSpy(), lambda b: b), StatelessLowest(), [game_plan(0, 0)])
        assert seen and set(seen) == {1}
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_a_saved_checkpoint_evaluates_the_same_with_any_workers(tmp_path):
    from agents import checkpoint, networks

    net = networks.build_network("mlp", features=False)
    checkpoint.save_checkpoint(tmp_path / "run1" / "best", net, "mlp", {"features": False}, {})
    run = str(tmp_path / "run1")
    one = evaluate(run, "random", games=22, seed=1, progress=False, regret=False)
    two = evaluate(run, "random", games=22, seed=1, progress=False, regret=False, workers=2)
    assert one.agent == run and one.games == 22
    assert _stable(one) == _stable(two)


# -- duplicate mode --

def test_duplicate_deals_the_same_cards_to_both_seats():
    seed = 7
    first, second = game_plan(seed, 4, duplicate=True), game_plan(seed, 5, duplicate=True)
    assert first.agent_seat != second.agent_seat
    games = [play_game(RandomAgent(1), RandomAgent(2), plan) for plan in (first, second)]
    a, b = games[0].records, games[1].records
    assert min(len(a), len(b)) >= 5
    for deal_a, deal_b in zip(a, b, strict=False):
        # what the agent held in game one, the opponent holds in game two, in the same role
        assert deal_a.hands[first.agent_seat] == deal_b.hands[1 - second.agent_seat]
        assert deal_a.hands[1 - first.agent_seat] == deal_b.hands[second.agent_seat]
        assert deal_a.starter == deal_b.starter
        assert ((deal_a.dealer == first.agent_seat)
                == (deal_b.dealer == 1 - second.agent_seat))
    # plain mode: a fresh deal sequence every game
    plain = [play_game(RandomAgent(1), RandomAgent(2), game_plan(seed, i)) for i in (4, 5)]
    assert plain[0].records[0].hands != plain[1].records[0].hands


def test_duplicate_cancels_the_cards_between_identical_policies():
    # Same deterministic policy on both sides: the second game of each pair is the first with the
    # seats swapped, so every pair's margins cancel exactly.
    report = evaluate(LowestCard(), LowestCard(), games=12, seed=4, duplicate=True,
                      progress=False, regret=False)
    assert report.points_per_game == 0.0 and report.wins == 6
    assert all(report.margins[i] == -report.margins[i + 1] for i in range(0, 12, 2))
    assert report.win_rate_ci95_paired == (0.5, 0.5)
    plain = evaluate(LowestCard(), LowestCard(), games=12, seed=4, progress=False, regret=False)
    assert plain.win_rate_ci95_paired is None
    assert any(plain.margins[i] != -plain.margins[i + 1] for i in range(0, 12, 2))


# -- discard regret --

def test_discard_regret_is_zero_for_the_analyzers_own_choice():
    from agents import analysis


    class BestDiscard(LowestCard):
        def __init__(self):
            self.pending = None

        def reset(self):
            self.pending = None

        def act(self, observation, action_mask):
            view = decode(observation)
            if len(view.hand) == 6:
                best = analysis.analyze_discards(list(view.hand), view.is_dealer)[0]
                first, self.pending = sorted(best.discard)
                return int(first)
            if len(view.hand) == 5 and self.pending is not None:
                card, self.pending = self.pending, None
                return int(card)
            return super().act(observation, action_mask)

    report = evaluate(BestDiscard(), "random", games=2, seed=0, progress=False)
    assert report.discard_regret is not None
    assert report.discard_regret["agent"] == pytest.approx(0.0, abs=1e-9)
    assert report.discard_regret["opponent"] > 0.1


# -- errors --

@pytest.mark.parametrize(("kwargs", "names"), [
    ({"games": 0}, "games"),
    ({"games": -5}, "games"),
    ({"games": 10, "workers": 0}, "workers"),
    ({"games": 7, "duplicate": True}, "even"),
])
def test_bad_counts_name_the_option(kwargs, names):
    with pytest.raises(ValueError, match=names):
        evaluate("random", "random", progress=False, **kwargs)


def test_unknown_agent_name_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown agent 'grandmaster'"):
        evaluate("grandmaster", "random", games=2, progress=False)


def test_missing_checkpoint_is_a_clear_error(tmp_path):
    missing = tmp_path / "nothing_here.pt"
    with pytest.raises(ValueError, match="no checkpoint at"):
        evaluate("random", str(missing), games=2, progress=False)


@pytest.mark.parametrize("kind", ["file", "folder"])
def test_unreadable_checkpoint_is_a_clear_error(tmp_path, kind):
    bad = tmp_path / "run1" / "best"
    if kind == "file":
        bad.parent.mkdir()
        bad.write_bytes(b"\x00not a checkpoint\xff" * 10)
    else:
        bad.mkdir(parents=True)
    with pytest.raises(ValueError) as info:
        evaluate(str(bad), "random", games=2, progress=False)
    assert str(bad) in str(info.value)


# -- the command line --

def test_cli_evaluate_prints_a_table_and_writes_the_json(tmp_path):
    out = tmp_path / "reports" / "eval.json"
    args = ["evaluate", "--agent", "random", "--opponent", "random", "--games", "6",
            "--seed", "3", "--json", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "win rate" in result.output and "points per game" in result.output
    data = json.loads(out.read_text())
    for key in CONTRACT_KEYS:
        assert key in data
    assert data["games"] == 6 and data["seed"] == 3
    again = tmp_path / "again.json"
    result = CliRunner().invoke(app, [*args[:-1], str(again), "--workers", "2"])
    assert result.exit_code == 0, result.output
    strip = lambda d: {k: v for k, v in d.items() if k not in VOLATILE_KEYS}  # noqa: E731
    assert strip(json.loads(again.read_text())) == strip(data)


def test_cli_duplicate_flag():
    result = CliRunner().invoke(app, ["evaluate", "--agent", "random", "--opponent", "random",
                                      "--games", "4", "--duplicate"])
    assert result.exit_code == 0, result.output
    assert "duplicate" in result.output


@pytest.mark.parametrize(("args", "message"), [
    (["--agent", "nosuchagent"], "unknown agent 'nosuchagent'"),
    (["--agent", "random", "--games", "0"], "games must be a positive"),
    (["--agent", "random", "--workers", "0"], "workers must be a positive"),
])
def test_cli_bad_input_exits_2_with_one_line(args, message):
    result = CliRunner().invoke(app, ["evaluate", "--opponent", "random", *args])
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


# -- the compiled core: the plain engine's games, batch sides and sides with memory --

class StatelessLowest(LowestCard):
    stateless = True


class StatelessKeeper(HandKeeper):
    """HandKeeper without the pending discard: it re-derives its pair from the observation."""

    stateless = True

    def act(self, observation, action_mask):
        view = decode(observation)
        if len(view.hand) == 5:  # second discard: the rest of the best pair for the six cards
            self.pending = None
            six = tuple(sorted(view.hand + view.discards))
            keeps = [k for k in combinations(six, 4) if view.discards[0] not in k]
            unseen = [c for c in range(52) if c not in six]
            hands = np.repeat(np.array(keeps), len(unseen), axis=0)
            starters = np.tile(np.array(unseen), len(keeps))
            means = score_hands(hands, starters).reshape(len(keeps), -1).mean(axis=1)
            keep = keeps[int(np.argmax(means))]
            return sorted(set(view.hand) - set(keep))[0]
        return super().act(observation, action_mask)


@pytest.mark.parametrize("agents", [(StatelessLowest, StatelessLowest),
                                    (StatelessKeeper, StatelessLowest)])
def test_both_engines_play_the_same_games_on_scripted_deals(agents):
    # Duplicate plans script 40 deals, more than any game here needs, so no random deal is used:
    # with deterministic agents the compiled core and the plain engine must play identical games.
    from training.batch_play import play_games

    plans = [game_plan(3, i, duplicate=True) for i in range(6)]
    fast_games = play_games(agents[0](), agents[1](), plans)
    for plan, fast_game in zip(plans, fast_games, strict=True):
        plain = play_game(agents[0](), agents[1](), plan)
        assert len(plain.records) < 40
        assert fast_game.scores == plain.scores and fast_game.winner == plain.winner
        assert len(fast_game.records) == len(plain.records)
        for ours, theirs in zip(fast_game.records, plain.records, strict=True):
            assert ours.dealer == theirs.dealer
            assert [sorted(h) for h in ours.hands] == [sorted(h) for h in theirs.hands]
            assert ours.starter == theirs.starter and ours.completed == theirs.completed
            assert [sorted(d) for d in ours.discards] == [sorted(d) for d in theirs.discards]
            assert (ours.pegging, ours.hand, ours.crib, ours.heels) == (
                theirs.pegging, theirs.hand, theirs.crib, theirs.heels)


def test_a_side_that_decides_one_game_at_a_time_is_timed():
    # a per-row side's calls are timed one by one (and the batch side's share alongside); with
    # batch sides alone a decision's time is a share of one call, and none is reported
    timed = evaluate(LowestCard(), "random", games=4, seed=0, progress=False, regret=False)
    assert set(timed.ms_per_decision) == {"agent", "opponent"}
    assert all(ms > 0 for ms in timed.ms_per_decision.values())
    batch = evaluate("random", "greedy", games=4, seed=0, progress=False, regret=False)
    assert batch.ms_per_decision is None
    assert "engine" not in batch.to_dict()  # one engine: nothing to name


def test_the_side_that_chose_an_illegal_card_is_named():
    class Cheat(StatelessLowest):
        name = "cheat"

        def act(self, observation, action_mask):
            return int(np.flatnonzero(action_mask == 0)[0])

    with pytest.raises(ValueError, match="opponent 'cheat' chose an illegal card in game"):
        evaluate("random", Cheat(), games=2, seed=0, progress=False)

    class Negative(StatelessLowest):
        name = "negative"

        def act(self, observation, action_mask):
            return -1  # read by the compiled core as "no move": must be an error, not a stall

    with pytest.raises(ValueError, match=r"agent .negative. chose an illegal card in game \d: card -1"):
        evaluate(Negative(), "random", games=2, seed=0, progress=False)

    class CheatWithMemory(LowestCard):  # a per-row side
        name = "cheat-with-memory"

        def act(self, observation, action_mask):
            return int(np.flatnonzero(action_mask == 0)[0])

    with pytest.raises(ValueError, match="agent 'cheat-with-memory' chose an illegal card"):
        evaluate(CheatWithMemory(), "random", games=2, seed=0, progress=False, regret=False)


def test_a_scripted_agent_with_memory_plays_one_copy_per_game():
    from agents.standard import StandardAgent

    class Remembers(StandardAgent):
        """Fails if it sees two games at once: within a game its score never goes down."""

        def reset(self):
            self.score = 0

        def observe(self, view):
            assert view.own_score >= self.score, "observations of two games reached one copy"
            self.score = view.own_score

    class SaysStateless(Remembers):
        stateless = True  # an explicit declaration wins

    assert StandardAgent.stateless and not Remembers.stateless and SaysStateless.stateless
    evaluate(Remembers(), "random", games=6, seed=0, progress=False, regret=False)
    with pytest.raises(AssertionError, match="two games reached one copy"):
        # declared stateless, one object serves every row: the check sees the games mixed
        evaluate(SaysStateless(), "random", games=6, seed=0, progress=False, regret=False)


def test_random_act_batch_draws_legal_cards_uniformly():
    agent = RandomAgent(seed=0)
    masks = np.zeros((4000, 52), dtype=np.int8)
    masks[:, [3, 17, 40]] = 1
    cards = agent.act_batch(np.zeros((4000, 687), dtype=np.float32), masks)
    counts = np.bincount(cards, minlength=52)
    assert counts.sum() == 4000 and set(np.flatnonzero(counts)) == {3, 17, 40}
    assert all(1200 < counts[c] < 1470 for c in (3, 17, 40))  # 1333 each, about 5 sigma

