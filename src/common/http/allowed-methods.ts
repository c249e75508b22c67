/** What `allowedMethods` needs of Express's router (router 2.x): its layers, and each route's methods. */
export interface RouterLike {
  stack: ReadonlyArray<{
    route?: { methods: Record<string, boolean | undefined> };
    match(path: string): unknown;
  }>;
}

/**
 * The methods some route serves on `path`, for the `Allow` header of a 405; empty when no route
 * matches the path at all (a 404). GET implies HEAD, as Express answers HEAD from the GET route.
 */
export function allowedMethods(router: RouterLike | undefined, path: string): string[] {
  const methods = new Set<string>();
  for (const layer of router?.stack ?? []) {
    if (!layer.route || !layer.match(path)) continue;
    for (const [method, enabled] of Object.entries(layer.route.methods)) {
      // `_all` routes answer every method themselves and never reach a 404.
      if (!enabled || method === '_all') continue;
      methods.add(method.toUpperCase());
    }
  }
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].sort();
}
