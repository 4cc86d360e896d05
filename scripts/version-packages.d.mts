export interface Bump {
  name: string;
  type: "major" | "minor" | "patch" | "none";
}
export interface VersionFix {
  name: string;
  from: string;
  to: string;
  instead: string;
}
/** The packages a changeset file bumps, with the bump type. */
export function changesetBumps(text: string): Bump[];
/** 0.x -> >=1.0.0 jumps no changeset asked for. */
export function unaskedMajors(
  before: Map<string, string>,
  after: Map<string, string>,
  bumps: readonly Bump[],
): VersionFix[];
/** Runs `changeset version` in `root`, then turns unasked 0.x majors into minors. */
export function versionPackages(root: string, changeset?: string[]): VersionFix[];
