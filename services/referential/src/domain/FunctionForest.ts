import { BusinessFunction, trusted } from "@portfolio/domain"
import type { LocatedFunction, PlacedFunction } from "./FunctionRecord.js"

/**
 * Codes in Unicode code point order, which is the order of their UTF-8 bytes and of PostgreSQL's
 * "C" collation, so that the storage can walk a forest in the order this defines. JavaScript
 * compares UTF-16 code units, which agree with code points except that a surrogate (U+D800 to
 * U+DFFF, half of a character above U+FFFF) is below U+E000 to U+FFFF; both are shifted as ICU's
 * code point order does.
 */
export const compareCodes = (a: string, b: string): number => {
  const shared = Math.min(a.length, b.length)
  for (let i = 0; i < shared; i++) {
    let x = a.charCodeAt(i)
    let y = b.charCodeAt(i)
    if (x === y) continue
    if (x >= 0xd800 && y >= 0xd800) {
      x += x >= 0xe000 ? -0x800 : 0x2000
      y += y >= 0xe000 ? -0x800 : 0x2000
    }
    return x - y
  }
  return a.length - b.length
}

/** Where a walk in tree order stands at a function (`treeWalker`). */
export interface WalkStep {
  /** How many functions met before end here: the previous sibling's subtree, down to it. */
  readonly closes: number
  /** Whether a sibling precedes it (the first child of its parent, or the first root, has none). */
  readonly afterSibling: boolean
  /** Its path, root first: the walker's own array, changed by the next step (copy it to keep it). */
  readonly path: ReadonlyArray<string>
}

/**
 * Follows a walk in tree order one function at a time, holding only the path to the current one:
 * what a nested form closes and opens there, and the flat list's path. A function more than one
 * level below the previous one is no tree order: a defect of the walk, thrown.
 */
export const treeWalker = () => {
  const path: Array<string> = []
  return {
    next: (fn: { readonly code: string; readonly level: number }): WalkStep => {
      if (!Number.isInteger(fn.level) || fn.level < 1 || fn.level > path.length + 1) {
        throw new Error(`a walk of the forest met ${fn.code} at level ${fn.level} after level ${path.length}`)
      }
      const closes = path.length - fn.level + 1
      path.length = fn.level - 1
      path.push(fn.code)
      return { closes, afterSibling: closes > 0, path }
    },
    /** The functions still open when the walk ends. */
    end: (): number => {
      const open = path.length
      path.length = 0
      return open
    }
  }
}

/** A walk's functions with their paths, the flat list's form: one walker per walk. */
export const locating = () => {
  const walker = treeWalker()
  return (fn: PlacedFunction): PlacedFunction & LocatedFunction => ({ ...fn, path: [...walker.next(fn).path] })
}

export const toBusinessFunction = (located: LocatedFunction): BusinessFunction =>
  trusted(BusinessFunction, {
    id: located.id,
    code: located.code,
    name: located.name,
    description: located.description,
    parentId: located.parentId,
    level: located.path.length,
    path: located.path,
    applicationCodes: located.applicationCodes,
    createdAt: located.createdAt,
    updatedAt: located.updatedAt
  })

/**
 * The flat list's order as a comparison of paths: depth first with siblings by code is the order
 * of the paths compared code by code, a function before its descendants. A path no function has
 * any more (moved or removed since) still has its place in that order.
 */
export const comparePaths = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): number => {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const order = compareCodes(a[i]!, b[i]!)
    if (order !== 0) return order
  }
  return a.length - b.length
}
