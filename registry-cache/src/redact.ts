/**
 * Package-manager output is quoted in error messages so a person can act on it; it can echo
 * registry credentials (URLs with user:password, `_authToken=` lines, bearer headers), which
 * must not reach logs. This masks the usual shapes.
 */
export function redactSecrets(text: string): string {
  return text
    .replace(/(\/\/)[^/\s:@]+:[^/\s@]+@/g, "$1***@")
    .replace(/((?:_authToken|_auth|_password|token|password|secret)\s*[=:]\s*)\S+/gi, "$1***")
    .replace(/(bearer\s+)[A-Za-z0-9._~+/=-]+/gi, "$1***");
}

/** The last `maxChars` characters of a command's output, redacted, for an error message. */
export function outputTail(output: string | undefined, maxChars = 2000): string {
  const text = redactSecrets((output ?? "").trim());
  return text.length > maxChars ? `…${text.slice(-maxChars)}` : text;
}
