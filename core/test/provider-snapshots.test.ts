import { describe, expect, it } from "vitest";
import { DEFAULT_SNAPSHOT_TIMINGS, ProviderSnapshots } from "../src/providers/provider-snapshots.js";
import { createSilentLogger } from "../src/logging/logger.js";
import { systemClock } from "../src/util/clock.js";
import type { ProbeDepth } from "../src/spec/index.js";

interface Verdict {
  readonly available: boolean;
  readonly depth: ProbeDepth | "failed";
  readonly note: string;
}

/** A snapshot over probes the test answers by hand, one deferred answer per probe. */
function snapshotsWithManualProbes(timings = DEFAULT_SNAPSHOT_TIMINGS) {
  const pending: { depth: ProbeDepth; answer: (verdict: Verdict) => void }[] = [];
  const snapshots = new ProviderSnapshots<Verdict>(
    (_id, depth) => new Promise<Verdict>((resolve) => pending.push({ depth, answer: resolve })),
    (_id, message) => ({ available: false, depth: "failed", note: message }),
    systemClock,
    createSilentLogger(),
    timings,
  );
  snapshots.reset(["a"]);
  /** Waits until the next probe has started and returns it. */
  const nextProbe = async () => {
    for (let attempt = 0; attempt < 200 && pending.length === 0; attempt += 1)
      await new Promise((resolve) => setTimeout(resolve, 5));
    const probe = pending.shift();
    if (probe === undefined) throw new Error("no probe started");
    return probe;
  };
  return { snapshots, nextProbe };
}

describe("ProviderSnapshots", () => {
  it("publishes a first inspect result before the full one, and never lets an inspect result replace a full one", async () => {
    const { snapshots, nextProbe } = snapshotsWithManualProbes();
    const full = snapshots.refresh("a", "full");
    const inspect = await nextProbe();
    expect(inspect.depth).toBe("inspect");
    inspect.answer({ available: true, depth: "inspect", note: "quick" });
    const second = await nextProbe();
    expect(second.depth).toBe("full");
    expect(snapshots.peek("a")?.value.note).toBe("quick");
    second.answer({ available: false, depth: "full", note: "deep" });
    expect((await full).value.note).toBe("deep");

    const later = snapshots.refresh("a", "inspect");
    (await nextProbe()).answer({ available: true, depth: "inspect", note: "quick again" });
    await later;
    expect(snapshots.peek("a")?.value.note).toBe("deep");
  });

  it("reports a probe that never answers as failed after the probe timeout, and probes again on the next refresh", async () => {
    const { snapshots, nextProbe } = snapshotsWithManualProbes({ ...DEFAULT_SNAPSHOT_TIMINGS, probeTimeoutMs: 50 });
    const first = snapshots.refresh("a", "inspect");
    await nextProbe(); // never answered
    expect((await first).value).toMatchObject({ depth: "failed", note: expect.stringContaining("did not finish") });
    const again = snapshots.refresh("a", "inspect");
    (await nextProbe()).answer({ available: true, depth: "inspect", note: "back" });
    expect((await again).value.note).toBe("back");
  });

  it("starts no probe once stopped, answering with what it knows", async () => {
    const { snapshots } = snapshotsWithManualProbes();
    await snapshots.stop();
    expect((await snapshots.refresh("a", "full")).value).toMatchObject({
      available: false,
      note: expect.stringContaining("shutting down"),
    });
  });
});
