/** What a test needs of a response: status, headers, the raw text and the parsed JSON when it is JSON. */
export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly contentType: string
  readonly text: string
  readonly body: any
}

export interface RequestOptions {
  readonly method?: string
  readonly token?: string
  readonly headers?: Record<string, string>
  /** An object is sent as JSON; a string is sent as is. */
  readonly body?: unknown
}

export const send = async (url: string, options: RequestOptions = {}): Promise<Reply> => {
  const headers: Record<string, string> = { ...options.headers }
  if (options.token !== undefined) headers["authorization"] = `Bearer ${options.token}`
  let body: string | undefined
  if (typeof options.body === "string") body = options.body
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body)
    headers["content-type"] ??= "application/json"
  }
  const response = await fetch(url, { method: options.method ?? "GET", headers, ...(body === undefined ? {} : { body }) })
  const text = await response.text()
  const contentType = response.headers.get("content-type") ?? ""
  let parsed: unknown = undefined
  if (/json/.test(contentType) && text.length > 0) parsed = JSON.parse(text)
  return { status: response.status, headers: response.headers, contentType, text, body: parsed }
}

/** Requests relative to a base URL, optionally with a PAT. */
export const client = (baseUrl: string, token?: string) => {
  const call = (method: string, path: string, options: Omit<RequestOptions, "method"> = {}) =>
    send(`${baseUrl}${path}`, { method, ...(token === undefined ? {} : { token }), ...options })
  return {
    get: (path: string, options?: Omit<RequestOptions, "method">) => call("GET", path, options),
    post: (path: string, options?: Omit<RequestOptions, "method">) => call("POST", path, options),
    put: (path: string, options?: Omit<RequestOptions, "method">) => call("PUT", path, options),
    del: (path: string, options?: Omit<RequestOptions, "method">) => call("DELETE", path, options),
    call
  }
}
export type Client = ReturnType<typeof client>
