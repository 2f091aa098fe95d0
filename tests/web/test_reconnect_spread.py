"""The browser client's wait before a reconnect (web/js/backoff.js), read in the browser: full
jitter over the exponential ceiling, a restarting or busy server's ``retry_ms`` spread over, and
anything else in a close's reason ignored (#45)."""

from __future__ import annotations

CASES = """async () => {
  const { retryDelay, serverHint } = await import('/js/backoff.js');
  const low = () => 0, high = () => 0.999999;
  const both = (attempt, close) => [retryDelay(attempt, close, low), retryDelay(attempt, close, high)];
  return {
    dropped: both(1, { code: 1006, reason: "" }),
    third: both(3, { code: 1006, reason: "" }),
    late: both(12, { code: 1006, reason: "" }),
    restart: both(1, { code: 1012, reason: "" }),
    restartSpread: both(1, { code: 1012, reason: '{"retry_ms":20000}' }),
    busy: both(1, { code: 1013, reason: '{"retry_ms":5000}' }),
    busyGarbage: both(1, { code: 1013, reason: "busy" }),
    hintElsewhere: serverHint({ code: 1000, reason: '{"retry_ms":5000}' }),
    hintHuge: serverHint({ code: 1013, reason: '{"retry_ms":1e12}' }),
    hintNegative: serverHint({ code: 1013, reason: '{"retry_ms":-5}' }),
    noClose: both(1, undefined),
  };
}"""


def test_the_reconnect_wait_spreads_a_crowd_and_takes_the_servers_word(pages, web_server):
    page = pages.new()
    page.goto("/")
    got = page.evaluate(CASES)
    assert got["dropped"] == [100, 400]  # a quarter to all of 400 ms
    assert got["third"] == [400, 1600]
    assert got["late"] == [2500, 10000]  # the ceiling stops at 10 s
    assert got["restart"] == [750, 3000]  # a restart that says nothing: over at least 3 s
    assert got["restartSpread"] == [2000, 20000]  # a restart that says 20 s: over 20 s
    assert got["busy"] == [500, 5000]
    assert got["busyGarbage"] == [100, 400]  # a reason that is no hint is no hint
    assert got["hintElsewhere"] == 0 and got["hintNegative"] == 0
    assert got["hintHuge"] == 60000  # never more than a minute, whatever a server says
    assert got["noClose"] == [100, 400]
