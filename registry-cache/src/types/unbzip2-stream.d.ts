// unbzip2-stream ships no types. It returns a classic "through" duplex stream.
declare module "unbzip2-stream" {
  import type { Duplex } from "node:stream";
  export default function unbzip2Stream(): Duplex;
}
