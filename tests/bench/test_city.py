"""bench.city, small (#45), so it cannot rot: a city of 200 rooms on the default setup (the
embedded store) plays for a while and every figure the benchmark prints is there and sane."""

from __future__ import annotations

import math

from bench import city


def test_a_small_city_plays_with_bots_and_screens_and_reports_every_figure(capsys):
    args = city.parser().parse_args(["--rooms", "200", "--duration", "15", "--idle", "4", "--warmup", "2",
                                     "--spread", "3", "--limit", "90"])
    result = city.one_city(args, 200)
    assert result["rooms"] == 200 and result["screens"] == 20 and result["bot_rooms"] == 67, result
    # five seats a room: three humans and two bots in a bot room, a screen in one in ten
    assert result["sockets"] == 200 * 5 - 67 * 2 + 20, result
    assert result["errors"] == {} and result["retries"] == {}, result
    # one action a room every 3 s on average, for 15 s: ~1,000, and no room stuck
    assert result["actions"] > 400, result
    assert 0 < result["p50_ms"] <= result["p99_ms"] and math.isfinite(result["p99_ms"]), result
    assert result["cpu_us_per_action"] > 0 and result["idle_cpu_us_per_socket_s"] > 0, result
    assert result["peak_rss_mb"] > 50 and 0 < result["generator_cpu_share"] < 2, result
    assert "200 rooms on 1 process(es) (" in capsys.readouterr().out
