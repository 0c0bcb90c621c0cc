// Types of healthcheck.mjs, which the image runs as plain JavaScript (no sources in the image).
export declare const AdminPorts: Readonly<Record<"gateway" | "referential" | "provisioning" | "webhook-dispatcher" | "console", number>>
export declare const serviceOf: (args: ReadonlyArray<string>) => keyof typeof AdminPorts | undefined
export declare const adminPortOf: (service: keyof typeof AdminPorts, environ: ReadonlyArray<string>) => string
