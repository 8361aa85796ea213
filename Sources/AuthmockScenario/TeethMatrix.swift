import Foundation
import Yams

/// The expectation matrix of `scenarios/_teeth.yaml`: for each fault switch
/// of the reference driver, the case runs that must not pass.
public struct TeethMatrix: Sendable {
    /// Every cell is firm: a run listed under `fail` must not PASS, every
    /// other run must PASS. There is no "may": a cell whose verdict depends
    /// on timing is a case that cannot tell a correct client from a broken
    /// one, and the case is fixed instead.
    public struct Cells: Sendable {
        /// Case id -> profiles whose run must not PASS.
        public var fail: [String: Set<String>]
    }

    public var faults: [(name: String, cells: Cells)]

    public static func load(path: String) throws -> TeethMatrix {
        try parse(try String(contentsOfFile: path, encoding: .utf8), file: path)
    }

    public static func parse(_ text: String, file path: String) throws -> TeethMatrix {
        guard let root = try Yams.compose(yaml: text)?.mapping else {
            throw ScenarioError(file: path, line: 1, column: 1, message: "expected a mapping of fault name to cells")
        }
        var faults: [(String, Cells)] = []
        for (key, value) in root {
            guard let name = key.string, let mapping = value.mapping else {
                throw ScenarioError(
                    file: path, line: key.mark?.line ?? 1, column: key.mark?.column ?? 1, message: "each fault maps to {fail: {case id: [profiles]}}")
            }
            for other in mapping.keys where other.string != "fail" {
                throw ScenarioError(
                    file: path, line: other.mark?.line ?? 1, column: other.mark?.column ?? 1,
                    message: "unknown key '\(other.string ?? "?")' under \(name): only fail (every cell is firm; no may)")
            }
            func cells(_ node: Node?) throws -> [String: Set<String>] {
                guard let node else { return [:] }
                guard let map = node.mapping else {
                    throw ScenarioError(
                        file: path, line: node.mark?.line ?? 1, column: node.mark?.column ?? 1, message: "expected case id: [profiles]")
                }
                var out: [String: Set<String>] = [:]
                for (id, profiles) in map {
                    out[id.string ?? ""] = Set((profiles.sequence ?? []).compactMap(\.string))
                }
                return out
            }
            faults.append((name, Cells(fail: try cells(mapping["fail"]))))
        }
        return TeethMatrix(faults: faults)
    }

    /// Cells where `results` (the runs with `fault`, or with none) differ from the matrix.
    public func differences(fault: String?, results: [CaseResult]) -> [String] {
        let cells = fault.flatMap { name in faults.first { $0.name == name }?.cells } ?? Cells(fail: [:])
        var out: [String] = []
        for result in results {
            let mustCatch = cells.fail[result.id]?.contains(result.profile) == true
            let caught = result.verdict == .fail || result.verdict == .nonStrict
            if result.verdict == .error || result.verdict == .skip {
                out.append(
                    "\(fault ?? "no fault") x \(result.label): \(result.verdict.rawValue) (\(result.reason ?? "")); a cell must be PASS or FAIL")
            } else if mustCatch && !caught {
                out.append("\(fault ?? "no fault") x \(result.label): expected the case to catch the fault (FAIL), it PASSed")
            } else if !mustCatch && caught {
                let why = result.failedFindings.first.map { ": \($0.expectation): \($0.message)" } ?? ""
                out.append("\(fault ?? "no fault") x \(result.label): expected PASS, got \(result.verdict.rawValue)\(why)")
            }
        }
        return out
    }

    /// Cells naming a case id or a profile no scenario has: a typo would
    /// otherwise silently turn a cell into "must pass".
    public func unknownCells(_ cases: [(Scenario, String)]) -> [String] {
        let runs = Set(cases.map { "\($0.0.id) [\($0.1)]" })
        var out: [String] = []
        for (name, cells) in faults {
            for (id, profiles) in cells.fail {
                for profile in profiles.sorted() where !runs.contains("\(id) [\(profile)]") {
                    out.append("\(name): \(id) [\(profile)] is not a case run")
                }
            }
        }
        return out
    }

    /// Faults each case id catches (for docs/cases.md).
    public func catchers() -> [String: [String]] {
        var out: [String: [String]] = [:]
        for (name, cells) in faults {
            for id in cells.fail.keys { out[id, default: []].append(name) }
        }
        return out.mapValues { $0.sorted() }
    }
}
