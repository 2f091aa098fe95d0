"""A storm of sockets, small (#45): bench.storm's crowd connects at once and again after the server
is restarted under it; every socket is welcomed both times, none is refused for good, and every
acknowledged start survives the restart. With the bounds made tiny, the server pushes back (close
1013 with a hint) and the crowd still gets in."""

from __future__ import annotations

from bench import storm


def storm_args(*extra: str) -> object:
    return storm.parser().parse_args(["--rooms", "200", "--spread", "2", "--limit", "90", *extra])


def test_a_crowd_all_comes_in_and_comes_back_after_a_restart_under_it(capsys):
    result = storm.run(storm_args("--restart", "term"))
    assert result["storm"]["welcomed"] == 1000 and result["storm"]["all_welcomed_s"] is not None, result
    assert result["started"] == 200, result
    restart = result["restart"]
    assert restart["welcomed"] == 1000 and restart["all_welcomed_s"] is not None, result
    assert restart["lost_starts"] == 0, result
    out = capsys.readouterr().out
    # the first storm needed no retry; after the restart only the restart's own (1012, told
    # when to come back, and refused while the server was down)
    assert "retries by kind none" in out.splitlines()[0], out
    restart_line = next(line for line in out.splitlines() if line.startswith("restart"))
    retried = restart_line.split("retries by kind ")[1].split("}")[0]
    assert "close 1012" in retried and "1013" not in retried and "InvalidMessage" not in retried, out


def test_a_full_queue_tells_newcomers_when_to_come_back_and_they_all_get_in(capsys):
    result = storm.run(storm_args("--restart", "none", "--set", "HELLOS_AT_ONCE=1", "HELLO_QUEUE=20"))
    assert result["storm"]["welcomed"] == 1000 and result["storm"]["all_welcomed_s"] is not None, result
    first = capsys.readouterr().out.splitlines()[0]
    assert "close 1013" in first, first  # pushed back, and every one of them in at the end
