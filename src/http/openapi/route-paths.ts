const OPENAPI_PARAMETER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** `/policy/{id}` → `/policy/:id`. */
export function toExpressPath(openApiPath: string): string {
  return openApiPath.replace(OPENAPI_PARAMETER, ':$1');
}

export function pathParameterNames(openApiPath: string): string[] {
  return [...openApiPath.matchAll(OPENAPI_PARAMETER)].map((match) => match[1] as string);
}
