import { useEffect, useState } from "preact/hooks";
import { api } from "../api/client.js";
import { ApiError, type ProviderDoctor, type ProviderFinding } from "../api/types.js";
import { findingLabel, providerConfigSnippet } from "../model/first-hour.js";

const BADGE_CLASS: Readonly<Record<ReturnType<typeof findingLabel>, string>> = {
  ready: "badge-completed",
  "ready, with a warning": "badge-waiting-on-children",
  disabled: "badge-idle",
  checking: "badge-running",
  "needs setup": "badge-failed",
};

function Finding(props: { readonly finding: ProviderFinding }) {
  const { finding } = props;
  const label = findingLabel(finding);
  const name =
    finding.displayName !== finding.providerInstanceId
      ? `${finding.providerInstanceId} (${finding.displayName})`
      : finding.providerInstanceId;
  return (
    <li class="finding card" data-provider-id={finding.providerInstanceId} data-finding={label}>
      <header>
        <h3>{name}</h3>
        <span class={`badge ${BADGE_CLASS[label]}`}>{label}</span>
      </header>
      {finding.canRunWork || !finding.enabled ? (
        <p class="finding-detail">{finding.detail}</p>
      ) : (
        <div class="finding-fix">
          <p class="finding-problem">{finding.problem ?? finding.detail}</p>
          {finding.install !== null && (
            <p>
              Install it on the server's machine: <code class="command">{finding.install}</code>
            </p>
          )}
        </div>
      )}
      {finding.warnings.map((warning) => (
        <p key={warning} class="finding-warning">
          Warning: {warning}
        </p>
      ))}
    </li>
  );
}

/** How to configure another instance: the lines to add to the config file for a driver. */
function AddProviderHelp(props: { readonly doctor: ProviderDoctor }) {
  const drivers = props.doctor.drivers;
  const [driver, setDriver] = useState(drivers[0] ?? "");
  if (drivers.length === 0)
    return (
      <p class="hint">No plugin with a driver is loaded on this server: install one (switchyard plugin install).</p>
    );
  const taken = props.doctor.providers.map((provider) => provider.providerInstanceId);
  return (
    <details class="add-provider" open={!props.doctor.ready}>
      <summary>Configure {props.doctor.ready ? "another" : "a"} provider</summary>
      <p>
        Provider instances are listed in <code>{props.doctor.configFile}</code> under <code>"providers"</code>. Add one,
        then restart <code>switchyard serve</code> and run <code>switchyard doctor</code> to check it.
      </p>
      <label for="config-driver">Driver</label>{" "}
      <select id="config-driver" value={driver} onChange={(e) => setDriver((e.target as HTMLSelectElement).value)}>
        {drivers.map((kind) => (
          <option key={kind} value={kind}>
            {kind}
          </option>
        ))}
      </select>
      <pre class="config-snippet" aria-label={`Config for a ${driver} instance`}>
        {providerConfigSnippet(driver, taken)}
      </pre>
    </details>
  );
}

/**
 * Doctor's provider findings (GET /providers/doctor): each configured instance, whether it can
 * run work and, when not, what fixes it; and how to configure another. Read-only: the server's
 * config is changed on its machine. "Check again" reads the snapshot again (the server rechecks
 * an instance that could not run work on its own).
 */
export function ProviderDoctorPanel(props: { readonly onLoaded?: (doctor: ProviderDoctor) => void }) {
  const [doctor, setDoctor] = useState<ProviderDoctor | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [reading, setReading] = useState(false);
  const read = async () => {
    setReading(true);
    try {
      const answer = await api<ProviderDoctor>("GET", "/providers/doctor");
      setDoctor(answer);
      setError(null);
      props.onLoaded?.(answer);
    } catch (failure) {
      setError(failure instanceof ApiError ? failure.message : String(failure));
    } finally {
      setReading(false);
    }
  };
  useEffect(() => void read(), []);
  return (
    <div class="provider-doctor">
      {error !== null && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {doctor === null && error === null && <p class="hint">Checking providers…</p>}
      {doctor !== null && (
        <>
          {doctor.providers.length === 0 ? (
            <p class="hint">No provider is configured yet.</p>
          ) : (
            <ul class="findings" aria-label="Configured providers">
              {doctor.providers.map((finding) => (
                <Finding key={finding.providerInstanceId} finding={finding} />
              ))}
            </ul>
          )}
          <AddProviderHelp doctor={doctor} />
        </>
      )}
      <button type="button" onClick={() => void read()} disabled={reading}>
        {reading ? "Checking…" : "Check again"}
      </button>
    </div>
  );
}
