import type { RegistryAgent } from "./registry-schema.js";

/**
 * Ranks agents for a free-text query. Every word of the query must match somewhere (id, name,
 * description or authors); an agent scores by where each word matched, id and name counting
 * far more than the description, so `codex` finds `codex-acp` before an agent that merely
 * mentions Codex. An empty query lists everything by name.
 */
export function rankAgents(agents: readonly RegistryAgent[], query: string): RegistryAgent[] {
  const words = query
    .toLowerCase()
    .split(/\s+/)
    .filter((word) => word.length > 0);
  const scored: { agent: RegistryAgent; score: number }[] = [];
  for (const agent of agents) {
    let total = 0;
    let allMatched = true;
    for (const word of words) {
      const score = scoreWord(agent, word);
      if (score === 0) {
        allMatched = false;
        break;
      }
      total += score;
    }
    if (allMatched) scored.push({ agent, score: total });
  }
  scored.sort(
    (a, b) => b.score - a.score || a.agent.name.localeCompare(b.agent.name) || a.agent.id.localeCompare(b.agent.id),
  );
  return scored.map((entry) => entry.agent);
}

function scoreWord(agent: RegistryAgent, word: string): number {
  const id = agent.id.toLowerCase();
  const name = agent.name.toLowerCase();
  if (id === word) return 100;
  if (name === word) return 90;
  if (id.startsWith(word)) return 80;
  if (name.startsWith(word)) return 70;
  if (
    name.split(/[^a-z0-9]+/).some((part) => part.startsWith(word)) ||
    id.split(/[-._]/).some((part) => part.startsWith(word))
  )
    return 60;
  if (id.includes(word)) return 50;
  if (name.includes(word)) return 40;
  if (agent.description.toLowerCase().includes(word)) return 20;
  if ((agent.authors ?? []).some((author) => author.toLowerCase().includes(word))) return 10;
  return 0;
}
