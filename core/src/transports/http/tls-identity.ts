import { X509Certificate } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { isIP } from "node:net";
import { join } from "node:path";
import { execa } from "execa";
import { SwitchyardError } from "../../spec/index.js";

/** A certificate and key (PEM) to serve TLS with. */
export interface TlsIdentity {
  readonly cert: string;
  readonly key: string;
}

/** A TLS identity with the fingerprint links pin: SHA-256 of the certificate, 64 lowercase hex digits. */
export interface PinnableTlsIdentity extends TlsIdentity {
  readonly fingerprint: string;
}

/** The SHA-256 fingerprint of a PEM certificate, as links store it (lowercase hex, no colons). */
export function certificateFingerprint(certPem: string): string {
  return new X509Certificate(certPem).fingerprint256.replace(/:/g, "").toLowerCase();
}

function identityOf(cert: string, key: string, what: string): PinnableTlsIdentity {
  let fingerprint: string;
  try {
    fingerprint = certificateFingerprint(cert);
  } catch (error) {
    throw new SwitchyardError("invalid_input", `${what} is not a PEM certificate: ${(error as Error).message}.`, {});
  }
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(key))
    throw new SwitchyardError("invalid_input", "The TLS key file is not a PEM private key.", {});
  return { cert, key, fingerprint };
}

/** A certificate and key the user gives (`serve --tls-cert --tls-key`). */
export function readTlsIdentity(certFile: string, keyFile: string): PinnableTlsIdentity {
  const read = (file: string, what: string) => {
    try {
      return readFileSync(file, "utf8");
    } catch (error) {
      throw new SwitchyardError(
        "invalid_input",
        `Could not read the TLS ${what} ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`,
        { file },
      );
    }
  };
  return identityOf(read(certFile, "certificate"), read(keyFile, "key"), `The TLS certificate ${certFile}`);
}

/** Where a home's self-signed certificate lives: `<home>/keys/tls/`, the key 0600 in a 0700 folder. */
export function selfSignedFiles(home: string): { folder: string; cert: string; key: string } {
  const folder = join(home, "keys", "tls");
  return { folder, cert: join(folder, "server.crt"), key: join(folder, "server.key") };
}

/**
 * The home's self-signed certificate, made once with openssl (EC P-256, ten years) and kept:
 * links pin its fingerprint, so it must not change across restarts. Its names (the served
 * address, localhost, 127.0.0.1) are informative only, since peers pin the fingerprint rather
 * than check names. The key is written by openssl into the 0700 folder (then made 0600) and never passes argv.
 */
export async function selfSignedTlsIdentity(home: string, host: string): Promise<PinnableTlsIdentity> {
  const files = selfSignedFiles(home);
  if (!existsSync(files.cert) || !existsSync(files.key)) {
    mkdirSync(files.folder, { recursive: true, mode: 0o700 });
    chmodSync(files.folder, 0o700);
    chmodSync(join(files.folder, ".."), 0o700);
    const names = new Set(["DNS:localhost", "IP:127.0.0.1"]);
    const bare = host.replace(/^\[|\]$/g, "");
    if (bare !== "0.0.0.0" && bare !== "::") names.add(isIP(bare) === 0 ? `DNS:${bare}` : `IP:${bare}`);
    const temp = { cert: `${files.cert}.tmp`, key: `${files.key}.tmp` };
    try {
      await execa(
        "openssl",
        [
          "req",
          "-x509",
          "-newkey",
          "ec",
          "-pkeyopt",
          "ec_paramgen_curve:prime256v1",
          "-nodes",
          "-days",
          "3650",
          "-subj",
          "/CN=switchyard",
          "-addext",
          `subjectAltName=${[...names].join(",")}`,
          "-keyout",
          temp.key,
          "-out",
          temp.cert,
        ],
        { stdin: "ignore" },
      );
    } catch (error) {
      rmSync(temp.cert, { force: true });
      rmSync(temp.key, { force: true });
      const missing = (error as { code?: string }).code === "ENOENT";
      throw new SwitchyardError(
        "invalid_input",
        missing
          ? "A self-signed certificate needs openssl, which is not installed here. Install it (apt-get install openssl), or give a certificate with --tls-cert and --tls-key."
          : `openssl could not make a self-signed certificate: ${((error as { stderr?: string }).stderr ?? (error as Error).message).slice(0, 500)}`,
        {},
      );
    }
    chmodSync(temp.key, 0o600);
    // The key first: a crash between the renames leaves no certificate without its key.
    renameSync(temp.key, files.key);
    renameSync(temp.cert, files.cert);
  }
  return identityOf(
    readFileSync(files.cert, "utf8"),
    readFileSync(files.key, "utf8"),
    `The self-signed certificate ${files.cert}`,
  );
}
