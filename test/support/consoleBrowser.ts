/** A browser on the console, as far as these cases need: its cookies, same-origin forms, no redirect followed. */
export const consoleBrowser = (consoleUrl: string) => {
  const jar = new Map<string, string>()
  const origin = new URL(consoleUrl).origin
  const call = async (path: string, form?: Record<string, string>) => {
    const headers: Record<string, string> = {}
    if (jar.size > 0) headers["cookie"] = [...jar].map(([name, value]) => `${name}=${value}`).join("; ")
    if (form !== undefined) Object.assign(headers, { "content-type": "application/x-www-form-urlencoded", origin })
    const response = await fetch(`${origin}${path}`, {
      method: form === undefined ? "GET" : "POST",
      headers,
      redirect: "manual",
      ...(form === undefined ? {} : { body: new URLSearchParams(form).toString() })
    })
    for (const line of response.headers.getSetCookie()) {
      const pair = line.slice(0, line.indexOf(";") === -1 ? line.length : line.indexOf(";"))
      const [name, value] = [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]
      if (value === "" || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) jar.delete(name)
      else jar.set(name, value)
    }
    return { status: response.status, location: response.headers.get("location"), text: await response.text() }
  }
  return {
    jar,
    get: (path: string) => call(path),
    post: (path: string, form: Record<string, string>) => call(path, form),
    signIn: async (email: string, password: string) => {
      const form = await call("/console/sign-in")
      const csrf = /name="csrf" value="([^"]+)"/.exec(form.text)?.[1] ?? ""
      return call("/console/sign-in", { csrf, email, password })
    }
  }
}
