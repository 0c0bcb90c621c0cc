import { type ErrorCode, makeProblem, problemContentType } from "@portfolio/domain"
import type http from "node:http"

/** Answers a problem+json body on a node response, the same body `problemResponse` makes. */
export const writeProblem = (
  target: http.ServerResponse,
  errorsUrl: string,
  errorCode: ErrorCode,
  detail: string,
  instance: string,
  headers: Record<string, string>
): void => {
  const problem = makeProblem({ errorCode, detail, instance, errorsUrl })
  const body = JSON.stringify({
    type: problem.type,
    title: problem.title,
    status: problem.status,
    detail: problem.detail,
    instance: problem.instance,
    errorCode: problem.errorCode
  })
  target.writeHead(problem.status, {
    ...headers,
    "content-type": problemContentType,
    "content-length": Buffer.byteLength(body)
  })
  target.end(body)
}
