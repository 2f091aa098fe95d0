"""A mid-range phone's CPU, emulated the way Chrome DevTools calibrates its "Mid-tier mobile"
preset: the CPU is slowed until Lighthouse's BenchmarkIndex reads a mid-tier phone's score.

A fixed 4x slow-down is a phone only relative to the machine it slows: on this project's 2-core
machines 4x reads a BenchmarkIndex of ~600, between DevTools' low-tier (264, a Moto G4 Power) and
mid-tier (1000, a Pixel 5) devices, while on a fast laptop 4x lands near the mid-tier score.
Calibrating makes "a mid phone" the same phone on any machine, and follows the machine's load of
the moment (a busier machine is slowed less), as DevTools does (its CalibrationController bisects
the rate against the same two scores).

The benchmark follows Lighthouse's published description of its BenchmarkIndex:
half of the time builds 10,000-character strings (allocation and GC), half copies a 100,000-item
array back and forth; the index is the mean of the two rates, per second, divided by 10."""

from __future__ import annotations

MID_TIER_SCORE = 1000   # DevTools' mid-tier device (a Pixel 5)
LOW_TIER_SCORE = 264    # DevTools' low-tier device (a Moto G4 Power 2022)

BENCHMARK_INDEX = """(duration) => {
  const half = duration / 2;
  const rate = (count, start) => Math.round(count / 10 / ((Date.now() - start) / 1000));
  let start = Date.now();
  let strings = 0;
  while (Date.now() - start < half) {
    let s = '';
    for (let j = 0; j < 10000; j++) s += 'a';
    if (s.length === 1) throw new Error('kept, so the loop is not optimised away');
    strings++;
  }
  const gc = rate(strings, start);
  const a = [], b = [];
  for (let i = 0; i < 100000; i++) a[i] = b[i] = i;
  start = Date.now();
  let copies = 0;
  // the clock read every tenth copy: reading it each time hits a known V8 slow path on some CPUs
  while (copies % 10 !== 0 || Date.now() - start < half) {
    const [from, to] = copies % 2 ? [b, a] : [a, b];
    for (let j = 0; j < from.length; j++) to[j] = from[j];
    copies++;
  }
  return (gc + rate(copies, start)) / 2;
}"""


def benchmark_index(page, duration_ms: int = 250, reads: int = 3) -> float:
    """The median of ``reads`` readings: one of 250 ms read a throttled page as unthrottled now
    and then (a collection, a change of rate not yet in force), and a rate chosen from it
    slowed the phone to well under the mid tier."""
    scores = sorted(float(page.evaluate(BENCHMARK_INDEX, duration_ms)) for _ in range(reads))
    return scores[len(scores) // 2]


def slow_to_mid_phone(page, cdp, target: float = MID_TIER_SCORE, rounds: int = 4) -> dict:
    """Slow the page's CPU until its BenchmarkIndex reads ``target``; returns the rate chosen and
    every (rate, score) read. The index scales about inversely with the rate, so each round moves
    the rate by the ratio of score to target (a secant step; DevTools bisects, to the same end).
    A machine already slower than the target is not slowed at all (rate 1)."""
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": 1})
    benchmark_index(page)  # warm-up: lets V8 optimise the loops before anything is read
    readings = []
    rate = 1.0
    for _ in range(rounds):
        score = benchmark_index(page)
        readings.append((rate, score))
        if abs(score - target) < target * 0.05:
            break
        rate = max(1.0, round(rate * score / target, 2))
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": rate})
    return {"rate": rate, "readings": readings}
