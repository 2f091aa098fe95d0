from engine import ActionKind, apply, legal_actions, make_rules, new_game, view_for


def test_random_game_runs_to_the_end_with_cards_conserved():
    import random

    rng = random.Random(7)
    s, _ = new_game(["a", "b", "c", "d"], make_rules(), "smoke")
    steps = 0
    while not s.over:
        actor = s.players[s.pending.player if s.pending else s.turn]
        s, _ = apply(s, actor, rng.choice(legal_actions(s, actor)), 0)
        assert s.card_count() == 168
        steps += 1
        assert steps < 5000
    assert view_for(s, "a")["game"]["winner"] in s.players
    assert ActionKind.PLAY.value == "play"
