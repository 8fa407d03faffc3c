import { createHash, createHmac, timingSafeEqual } from "node:crypto";

/** The header carrying the signature: `sha256=<hex HMAC-SHA256 of "<timestamp>.<raw body>">`. */
export const SIGNATURE_HEADER = "x-switchyard-signature";
/** The header carrying the signing time, in whole seconds since the epoch. */
export const TIMESTAMP_HEADER = "x-switchyard-timestamp";

/** Why a signed webhook request was refused. */
export type SignatureRefusal = "signature_missing" | "signature_invalid" | "timestamp_outside_window";

/** The signature of a body at a timestamp, as the header carries it (what a sender computes). */
export function signWebhookBody(secret: string, timestampSeconds: number, body: Buffer | string): string {
  return `sha256=${createHmac("sha256", secret).update(`${timestampSeconds}.`).update(body).digest("hex")}`;
}

/**
 * Checks a signed request: both headers present, the timestamp within the replay window of now,
 * and the HMAC-SHA256 over `<timestamp>.<raw body>` equal to the header's, compared in constant
 * time. A replay of a request that passed (within the window) is caught by the caller through
 * {@link signatureDigest}; one outside the window fails here on its timestamp.
 */
export function verifyWebhookSignature(input: {
  readonly secret: string;
  readonly signature: string | undefined;
  readonly timestamp: string | undefined;
  readonly body: Buffer;
  readonly nowMs: number;
  readonly windowMs: number;
}): { readonly ok: true } | { readonly ok: false; readonly refusal: SignatureRefusal; readonly message: string } {
  if (input.signature === undefined || input.timestamp === undefined) {
    return {
      ok: false,
      refusal: "signature_missing",
      message: `This webhook is signed: send ${TIMESTAMP_HEADER} (unix seconds) and ${SIGNATURE_HEADER}: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>" with the task's secret>.`,
    };
  }
  if (!/^\d{1,12}$/.test(input.timestamp.trim())) {
    return { ok: false, refusal: "signature_invalid", message: `${TIMESTAMP_HEADER} must be whole seconds since the epoch.` };
  }
  const timestamp = Number(input.timestamp.trim());
  const skewMs = Math.abs(input.nowMs - timestamp * 1000);
  if (skewMs > input.windowMs) {
    return {
      ok: false,
      refusal: "timestamp_outside_window",
      message: `${TIMESTAMP_HEADER} is ${Math.round(skewMs / 1000)} s away from the server's time, outside the ${Math.round(input.windowMs / 1000)} s replay window; sign each request when it is sent.`,
    };
  }
  const match = /^sha256=([0-9a-fA-F]{64})$/.exec(input.signature.trim());
  const expected = createHmac("sha256", input.secret).update(`${timestamp}.`).update(input.body).digest();
  // The comparison runs on equal lengths whatever was sent, so its time says nothing about the secret.
  const given = match === null ? Buffer.alloc(expected.length) : Buffer.from(match[1]!, "hex");
  if (!timingSafeEqual(given, expected) || match === null) {
    return { ok: false, refusal: "signature_invalid", message: `${SIGNATURE_HEADER} does not match the body and timestamp for this task's secret.` };
  }
  return { ok: true };
}

/** A signed request's identity for replay detection: the digest of its timestamp and signature. */
export function signatureDigest(timestamp: string, signature: string): string {
  return createHash("sha256").update(timestamp.trim()).update("\u0000").update(signature.trim().toLowerCase()).digest("base64url");
}
