/** The public API's base path: every public endpoint lives under it ({base_url} of the contract). */
export const PublicApiPrefix = "/api/v1"
