// Longest-prefix match of a name: the registry routes by it, and the gateway uses the same rule to name the
// upstream a call went to.

/**
 * Of `items`, the one whose tag is the longest that `name` starts with and that leaves a name behind;
 * `undefined` when none does. Two distinct tags of one length cannot both start a name, so there are no ties.
 */
export const longestTagOf = <A>(
  items: ReadonlyArray<A>,
  tagOf: (a: A) => string,
): ((name: string) => A | undefined) => {
  const byLength = [...items].sort((a, b) => tagOf(b).length - tagOf(a).length)
  return (name) =>
    byLength.find((a) => {
      const tag = tagOf(a)
      return name.length > tag.length && name.startsWith(tag)
    })
}

/**
 * What the published names of a prefix start with: `prefix + separator`, or nothing for the empty prefix (its
 * names are published unchanged, and it owns every name no longer namespace starts with).
 */
export const namespaceOf = (prefix: string, separator = '_'): string => (prefix === '' ? '' : prefix + separator)
