import type { DependencyContainer } from "tsyringe";

// A token is declared beside the interface it names (the store's beside the store port, the
// engine's beside the engine ports), so a layer that injects one depends only on the floor that
// owns the interface. The composition root (host/) pairs each token with its class.

/** A DI token that remembers the type it resolves to. */
export type Token<T> = symbol & { readonly __resolves?: T };

/** A token for `T`; the same name gives the same token (a registry keyed by name, across copies of core). */
export function token<T>(name: string): Token<T> {
  return Symbol.for(`switchyard.${name}`) as Token<T>;
}

/** Resolves a typed token. */
export function resolve<T>(container: DependencyContainer, token: Token<T>): T {
  return container.resolve<T>(token);
}
