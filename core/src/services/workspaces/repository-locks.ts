import { injectable } from "tsyringe";

/**
 * One git operation of this server at a time per key (a repository, a workspace): worktrees
 * added beside each other, a commit of a child's work and an apply that reads it, two applies
 * into one parent, never interleave here. Other processes' git (the parent agent's, the user's)
 * is met by git's own lock files, which the git runner waits out.
 */
@injectable()
export class RepositoryLocks {
  private readonly tails = new Map<string, Promise<void>>();

  async with<T>(key: string, work: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = before.then(() => mine);
    this.tails.set(key, tail);
    await before;
    try {
      return await work();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
