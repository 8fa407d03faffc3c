import { createHash, createHmac, timingSafeEqual } from "node:crypto";

/** The header carrying the signature: `sha256=<hex HMAC-SHA256 of "<timestamp>.<raw body>">`. */
export const SIGNATURE_HEADER = "x-switchyard-signature";
/** The header carrying the signing time, in whole seconds since the epoch. */
export const TIMESTAMP_HEADER = "x-switchyard-timestamp";

/** Why a signed webhook request was refused. */
export type SignatureRefusal =
  "signature_missing" | "signature_invalid" | "timestamp_invalid" | "timestamp_outside_window";

/**
 * Whole seconds since the epoch, written the one way a number is written: digits, no sign, no
 * leading zero, nothing around them. Any other spelling of the same number ("0" + ts, " ts")
 * would be a second request with the same signature, so it is refused rather than read.
 */
const CANONICAL_SECONDS = /^(?:0|[1-9][0-9]{0,11})$/;

/** The signature of a body at a timestamp, as the header carries it (what a sender computes). */
export function signWebhookBody(secret: string, timestampSeconds: number, body: Buffer | string): string {
  return `sha256=${createHmac("sha256", secret).update(`${timestampSeconds}.`).update(body).digest("hex")}`;
}

/** A request that passed: its timestamp as the number it was signed with, and its replay key. */
export interface VerifiedSignature {
  readonly ok: true;
  readonly timestampSeconds: number;
  /** What identifies the signed content (timestamp and body), for replay detection: see {@link replayKey}. */
  readonly replayKey: string;
}

/**
 * Checks a signed request: both headers present, the timestamp canonical and within the replay
 * window of now, and the HMAC-SHA256 over `<timestamp>.<raw body>` equal to the header's,
 * compared in constant time. The timestamp is parsed once; the HMAC, the window and the replay
 * key all use that one value. A replay of a request that passed (within the window) is caught
 * by the caller through `replayKey`; one outside the window fails here on its timestamp.
 */
export function verifyWebhookSignature(input: {
  readonly secret: string;
  readonly signature: string | undefined;
  readonly timestamp: string | undefined;
  readonly body: Buffer;
  readonly nowMs: number;
  readonly windowMs: number;
}): VerifiedSignature | { readonly ok: false; readonly refusal: SignatureRefusal; readonly message: string } {
  if (input.signature === undefined || input.timestamp === undefined) {
    return {
      ok: false,
      refusal: "signature_missing",
      message: `This webhook is signed: send ${TIMESTAMP_HEADER} (unix seconds) and ${SIGNATURE_HEADER}: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>" with the task's secret>.`,
    };
  }
  if (!CANONICAL_SECONDS.test(input.timestamp)) {
    return {
      ok: false,
      refusal: "timestamp_invalid",
      message: `${TIMESTAMP_HEADER} ${JSON.stringify(input.timestamp.slice(0, 40))} is not whole seconds since the epoch written plainly (digits only, no leading zero, no sign or spaces); send the number you signed, e.g. ${Math.floor(input.nowMs / 1000)}.`,
    };
  }
  const timestampSeconds = Number(input.timestamp);
  const skewMs = Math.abs(input.nowMs - timestampSeconds * 1000);
  if (skewMs > input.windowMs) {
    return {
      ok: false,
      refusal: "timestamp_outside_window",
      message: `${TIMESTAMP_HEADER} is ${Math.round(skewMs / 1000)} s away from the server's time, outside the ${Math.round(input.windowMs / 1000)} s replay window; sign each request when it is sent.`,
    };
  }
  const match = /^sha256=([0-9a-fA-F]{64})$/.exec(input.signature.trim());
  const expected = createHmac("sha256", input.secret).update(`${timestampSeconds}.`).update(input.body).digest();
  // The comparison runs on equal lengths whatever was sent, so its time says nothing about the secret.
  const given = match === null ? Buffer.alloc(expected.length) : Buffer.from(match[1]!, "hex");
  if (!timingSafeEqual(given, expected) || match === null) {
    return {
      ok: false,
      refusal: "signature_invalid",
      message: `${SIGNATURE_HEADER} does not match the body and timestamp for this task's secret.`,
    };
  }
  return { ok: true, timestampSeconds, replayKey: replayKey(timestampSeconds, input.body) };
}

/**
 * A signed request's identity for replay detection: the digest of what was signed, the
 * timestamp as a number and the body's SHA-256, never the headers' spelling. Two requests
 * with one key carry the same signed content, however their headers were written.
 */
export function replayKey(timestampSeconds: number, body: Buffer): string {
  const bodyDigest = createHash("sha256").update(body).digest("hex");
  return createHash("sha256").update(`${timestampSeconds}.${bodyDigest}`).digest("base64url");
}
