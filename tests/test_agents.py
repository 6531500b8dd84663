"""The scripted agents: legal moves only, observation only, the tactics of docs/RULES.md section 14."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from agents import AGENT_NAMES, RandomAgent, make_agent
from agents.analysis import analyze_discards, discard_table
from agents.endgame import choose_discard, discard_win_chances, win_chance, win_table
from agents.expert import ExpertAgent
from agents.greedy import GreedyAgent
from agents.pegging import WIN_VALUE, Board, endgame_mode, tactic_values
from agents.standard import StandardAgent
from crib_env.cards import VALUE, parse_card, parse_cards
from crib_env.game import Game, Phase
from crib_env.observation import decode, encode
from crib_env.scoring import score_play


def build(hands: tuple[str, str], starter: str, moves: str = "", first_dealer: int = 1,
          scores: tuple[int, int] = (0, 0), target: int = 121) -> Game:
    """A game on a scripted deal (player 0's and player 1's six cards), after ``moves``."""
    game = Game(target=target, first_dealer=first_dealer, single_deal=True, seed=0, deals=[
        {"hands": {"player_0": hands[0], "player_1": hands[1]}, "starter": starter}])
    game.scores = list(scores)
    for card in parse_cards(moves):
        game.step(card)
    return game


def act(agent, game: Game) -> int:
    return agent.act(encode(game, game.to_move), game.legal_mask())


def play_checked(agents, seed: int, target: int) -> int:
    """Play one game, asserting every action is allowed by the mask; returns decisions made."""
    game = Game(target=target, seed=seed, first_dealer=seed % 2)
    for agent in agents:
        agent.reset()
    decisions = 0
    while not game.is_over:
        player = game.to_move
        mask = game.legal_mask()
        action = agents[player].act(encode(game, player), mask.copy())
        assert mask[action] == 1, (agents[player].name, action, np.flatnonzero(mask))
        game.step(action)
        decisions += 1
    return decisions


# ---------------------------------------------------------------------------------------------
# Legal moves only, from the observation only


def _standard_and_others():
    """A standard agent and the three levels it meets, seeded as the masked-action tests expect."""
    return StandardAgent(9), [RandomAgent(10), GreedyAgent(11), StandardAgent(12)]


def test_no_agent_ever_plays_a_masked_action():
    """Thousands of games (short ones, to 31 points) between the scripted levels, both seats."""
    cheap = [(RandomAgent(1), GreedyAgent(2)), (GreedyAgent(3), RandomAgent(4)),
             (GreedyAgent(5), GreedyAgent(6)), (RandomAgent(7), RandomAgent(8))]
    decisions = sum(play_checked(list(cheap[i % 4]), i, 31) for i in range(1600))
    standard, others = _standard_and_others()
    decisions += sum(play_checked([standard, others[i % 3]][::1 - 2 * (i // 3 % 2)], i, 31)
                     for i in range(300))
    assert decisions > 50_000


def test_the_expert_never_plays_a_masked_action():
    """The expert against the scripted levels (short games, both seats), then whole games."""
    standard, others = _standard_and_others()
    expert = ExpertAgent(13, sims=12, discard_sims=12)
    decisions = sum(play_checked([expert, others[i % 3]][::1 - 2 * (i // 3 % 2)], i, 31)
                     for i in range(60))
    decisions += sum(play_checked([expert, standard][::1 - 2 * (i % 2)], 1000 + i, 121)
                     for i in range(4))
    assert decisions > 2_000


def hidden_twins(scores=(0, 0)) -> tuple[Game, Game]:
    """Two deals that look the same to player 0 (pone) but not to player 1: the dealer keeps the
    same four cards and plays them the same way, yet throws different cards to the crib (and the
    stock differs)."""
    p0 = "5H 6D 7C 8S JC 2H"
    return (build((p0, "4C 4D 9H TS KD QH"), "3S", scores=scores),
            build((p0, "4C 4D 9H TS AS AC"), "3S", scores=scores))


@pytest.mark.parametrize("name", ["random", "greedy", "standard", "expert"])
@pytest.mark.parametrize("scores", [(0, 0), (112, 115)])
def test_same_observation_same_action_whatever_the_hidden_cards(name, scores):
    games = hidden_twins(scores)
    twins = [make_agent(name, seed=42), make_agent(name, seed=42)]
    opponent_discards = (parse_cards("KD QH"), parse_cards("AS AC"))
    actions = 0
    while games[0].phase in (Phase.DISCARD, Phase.PLAY):
        if games[0].to_move == 0:
            obs = [encode(g, 0) for g in games]
            np.testing.assert_array_equal(obs[0], obs[1])
            chosen = [agent.act(o, g.legal_mask()) for agent, o, g in zip(twins, obs, games,
                                                                            strict=True)]
            assert chosen[0] == chosen[1]
            actions += 1
            for g in games:
                g.step(chosen[0])
        else:  # the dealer: its own discards, then its lowest legal card
            for g, discards in zip(games, opponent_discards, strict=True):
                g.step(discards[len(g.discards[1])] if g.phase == Phase.DISCARD
                       else g.legal_actions()[0])
        assert games[0].phase == games[1].phase
    assert actions >= 4


# ---------------------------------------------------------------------------------------------
# The levels


def test_registry_resolves_every_scripted_level_and_lists_names_on_error():
    for name, cls in (("random", RandomAgent), ("greedy", GreedyAgent),
                      ("standard", StandardAgent), ("expert", ExpertAgent)):
        assert isinstance(make_agent(name, seed=0), cls)
    with pytest.raises(ValueError, match="random, greedy, standard, expert"):
        make_agent("grandmaster")
    assert set(AGENT_NAMES) >= {"random", "greedy", "standard", "expert"}


def test_greedy_keeps_the_four_worth_most_without_a_starter():
    # 5-5-5-J and 5-5-5-K are both worth 14 on their own: greedy throws the 9 and one of J / K.
    game = build(("5H 5D 5S JC 9H KD", "AC 2C 3C 4C 6C 7C"), "QS", first_dealer=1)
    agent = GreedyAgent(0)
    thrown = []
    for _ in range(2):
        card = act(agent, game)
        thrown.append(card)
        game.step(card)
    assert parse_card("9H") in thrown
    assert set(thrown) & set(parse_cards("JC KD"))
    assert not set(thrown) & set(parse_cards("5H 5D 5S"))


def test_greedy_pegs_the_card_scoring_most():
    # Pone led 7C (count 7); dealer (player 1) holds 8 (15 for 2) and 7 (pair for 2) and K, 2.
    game = build(("7C 9D TD QD AS AH", "8H 7H KS 2S 3D 4D"), "JD", "AS AH 3D 4D 7C")
    assert game.to_move == 1
    assert act(GreedyAgent(0), game) in parse_cards("8H 7H")


def test_standard_does_not_lead_a_five():
    game = build(("5H 9C 3D KS AH AD", "QC QD 2S 8S 6H 7H"), "JD", "AH AD 2S 8S")
    assert game.phase == Phase.PLAY and game.to_move == 0
    assert act(StandardAgent(0), game) != parse_card("5H")


def test_standard_leads_from_a_pair():
    game = build(("4H 4C 9D KS AH AD", "QC QD 2S 8S 6H 7H"), "JD", "AH AD 2S 8S")
    assert act(StandardAgent(0), game) in parse_cards("4H 4C")


def test_standard_takes_fifteen_when_offered():
    # Pone leads TD (10); the dealer holds a 5: fifteen for 2.
    game = build(("TD 9C 3D KS AH AD", "5C QD 2S 8S 6H 7H"), "JD", "AH AD 2S 8S TD")
    assert game.to_move == 1
    assert act(StandardAgent(0), game) == parse_card("5C")


def test_standard_avoids_leaving_21():
    # Pone leads KC (10), the dealer 2H (12): 9D would leave 21 (a ten-card makes 31 for 2).
    game = build(("KC 9D 4S 7S AH AD", "2H QD 2S 8S 6H 5C"), "JD", "AH AD 2S 8S KC 2H")
    assert game.to_move == 0 and game.count == 12
    values = tactic_values(decode(encode(game, 0)), parse_cards("9D 4S 7S"))
    assert values[parse_card("9D")] < values[parse_card("4S")]
    assert act(StandardAgent(0), game) != parse_card("9D")


# ---------------------------------------------------------------------------------------------
# Near the end of the game: what wins before what scores


def dealer_facing_a_go_position(scores: tuple[int, int]) -> Game:
    """Player 0 deals; after a go the pone has led 3C and holds one card. The dealer holds 6C
    (count 9: a 6 pairs and makes 15) and QS (count 13: a 2 makes 15, a queen pairs)."""
    return build(("4C 6C QS JD JC 4S", "7D 4D KH AD 5S 3C"), "QH",
                 "AD KH 4C 4S 4D JC 5S JD 3C", first_dealer=0, scores=scores)


@pytest.mark.parametrize("make", [lambda: StandardAgent(0), lambda: ExpertAgent(0)])
def test_near_the_end_avoid_the_reply_that_loses(make):
    """Mid-game QS is the better card; with the pone 2 short of the target, 6C is, because only
    three unseen cards (the other sixes) answer it for 2, against six (twos and queens) for QS."""
    mid = dealer_facing_a_go_position((60, 60))
    end = dealer_facing_a_go_position((60, 119))
    assert mid.to_move == 0 and mid.count == 3
    assert act(make(), mid) == parse_card("QS")
    assert act(make(), end) == parse_card("6C")


def test_tactic_values_near_the_end_subtract_the_chance_of_a_losing_reply():
    """The loss term is the exact chance (enumerating every hand the opponent could hold) that it
    holds a reply worth the points it needs."""
    game = dealer_facing_a_go_position((60, 60))
    view = decode(encode(game, 0))
    legal = parse_cards("6C QS")
    mid = tactic_values(view, legal, Board(60, 60, 121, True), mode="score")
    end = tactic_values(view, legal, Board(60, 119, 121, True), mode="score")
    k = view.opp_cards_left
    for card in legal:
        line = [*view.sequence, card]
        count = view.count + VALUE[card]
        losing = {u for u in view.unseen if count + VALUE[u] <= 31 and score_play([*line, u]) >= 2}
        hands = list(combinations(view.unseen, k))
        p_lose = sum(bool(losing & set(h)) for h in hands) / len(hands)
        assert end[card] - mid[card] == pytest.approx(-WIN_VALUE * p_lose)


def test_pone_sure_to_count_out_plays_only_to_deny_the_dealer():
    """Pone holds 7D 5S 3C (+4D played) with a queen starter: 7 in the show. Needing 7 with the
    dealer 3 short, it lays the card that offers the dealer least (3C), not its usual 5S."""
    def position(scores):
        return build(("4C 6C QS JD JC 4S", "7D 4D KH AD 5S 3C"), "QH", "AD KH 4C 4S 4D JC",
                     first_dealer=0, scores=scores)
    mid, end = position((60, 60)), position((118, 114))
    assert mid.to_move == 1 and mid.count == 14
    assert endgame_mode(decode(encode(end, 1)), Board(114, 118, 121, False)) == "defend"
    assert act(StandardAgent(0), mid) == parse_card("5S")
    assert act(StandardAgent(0), end) == parse_card("3C")


def test_win_table_first_dealer_edge_and_symmetry():
    table = win_table(121)
    assert 0.53 < table[0, 0, 1] < 0.58  # docs/RULES.md section 13: the first dealer wins about 55%
    assert table[0, 0, 1] + table[0, 0, 0] == pytest.approx(1.0)
    assert table[100, 60, 1] + table[60, 100, 0] == pytest.approx(1.0)
    assert table[110, 100, 0] > table[100, 100, 0] > table[100, 110, 0]
    assert win_chance(121, 50, True, 121) == 1.0 and win_chance(50, 121, True, 121) == 0.0


def test_near_the_end_discards_play_for_the_win():
    """Pone needing 6 keeps T-Q-K-5 (6 with every starter) over the better average 8-T-5-9,
    which falls short with some starters."""
    hand6 = parse_cards("8C TC QD KD 5H 9H")
    board = Board(own=115, opp=100, target=121, dealer=False)
    table = discard_table(hand6)
    net_best = analyze_discards(hand6, dealer=False)[0]
    assert set(net_best.keep) == set(parse_cards("8C TC 5H 9H"))
    chosen = choose_discard(table, board)
    assert set(table.keep(chosen)) == set(parse_cards("TC QD KD 5H"))
    assert (table.hand_points[chosen] >= 6).all()
    assert discard_win_chances(table, board)[chosen] == max(discard_win_chances(table, board))
    mid_game = Board(own=60, opp=60, target=121, dealer=False)
    assert set(table.keep(choose_discard(table, mid_game))) == set(net_best.keep)
    for agent in (StandardAgent(0), ExpertAgent(0)):
        game = build(("8C TC QD KD 5H 9H", "AC 2C 3C 4C 6C 7C"), "JS", scores=(115, 100))
        thrown = []
        for _ in range(2):
            thrown.append(act(agent, game))
            game.step(thrown[-1])
        assert set(thrown) == set(parse_cards("8C 9H"))


def test_a_network_name_is_the_shipped_champion_or_a_path():
    from pathlib import Path

    from agents.registry import CHAMPION_PATH, SEARCH_NETWORK_PATH, network_path, search_network

    assert network_path("champion") == network_path(" champion ") == CHAMPION_PATH
    assert network_path("runs/x/latest") == Path("runs/x/latest")
    # the search's net= setting reads a network's name the same way
    assert search_network("champion") == CHAMPION_PATH
    assert search_network("runs/x/latest") == Path("runs/x/latest")
    assert search_network("") == SEARCH_NETWORK_PATH
