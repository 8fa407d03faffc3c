// The unauthorised scenario's record: every attempt that must be refused, by group, whether
// the server served it anyway, and the cases that could not be set up (a refusal of a credential
// that never worked proves nothing, so such a case makes its figure miss too).

export class Attempts {
  constructor(report) {
    this.report = report;
    this.list = [];
    /** Cases that could not be set up, by figure. */
    this.vacuous = new Map();
  }

  /** Records one attempt under `figure` (which figure it counts in) and `group`; `served` is whether the server did what it must refuse. */
  record(figure, group, label, served, detail = "") {
    this.list.push({ figure, group, label, served, detail });
  }

  /** A case of `figure` that could not be set up, with why. */
  notSetUp(figure, why) {
    this.vacuous.set(figure, (this.vacuous.get(figure) ?? 0) + 1);
    this.report.note(`could not be set up (${figure}): ${why}`);
  }

  /** Reports one figure: served attempts of `figure`, goal 0, missing also when a case was vacuous or none ran. */
  figure(figure, name, goal) {
    const attempts = this.list.filter((a) => a.figure === figure);
    const served = attempts.filter((a) => a.served);
    const vacuous = this.vacuous.get(figure) ?? 0;
    if (process.env.RELIABILITY_VERBOSE)
      for (const a of attempts) this.report.note(`[${a.group}] ${a.label}: ${a.detail}`);
    for (const a of served) this.report.note(`served: [${a.group}] ${a.label} (${a.detail})`);
    const groups = [...new Set(attempts.map((a) => a.group))];
    this.report.note(
      `${name}: ${attempts.length} attempts in ${groups.length} groups: ${groups.map((g) => `${g} ${attempts.filter((a) => a.group === g).length}`).join(", ")}`,
    );
    this.report.figure(
      name,
      `${served.length} of ${attempts.length} attempts${vacuous > 0 ? `, ${vacuous} case(s) could not be set up` : ""}`,
      goal,
      served.length === 0 && vacuous === 0 && attempts.length > 0,
    );
  }
}
