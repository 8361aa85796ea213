import AuthmockFileFormat
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
        /// Case id -> dialects whose run must not PASS.
        public var fail: [String: Set<String>]
        /// The cause matrix: the one cause every run this fault fails must
        /// be given (`Causes`), and no other; `causeIn` names another for
        /// the case ids where the same bug shows as another behaviour.
        public var cause: String?
        public var causeIn: [String: String] = [:]
        /// Case ids where the journal proves the cause only when the
        /// client's next request comes measurably after the answer that
        /// made it stale (header rotation's waiting calls, released the
        /// instant that answer arrives): a run there names the cause, or
        /// none (its findings shown as themselves), never another.
        public var causeUnprovenIn: Set<String> = []

        /// The cause a failed run of case `id` must have.
        public func expectedCause(_ id: String) -> String? { causeIn[id] ?? cause }
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
            for other in mapping.keys where !["fail", "cause", "cause_in", "cause_unproven_in"].contains(other.string) {
                throw ScenarioError(
                    file: path, line: other.mark?.line ?? 1, column: other.mark?.column ?? 1,
                    message:
                        "unknown key '\(other.string ?? "?")' under \(name): fail, cause, cause_in or cause_unproven_in (every cell is firm; no may)"
                )
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
            var causeIn: [String: String] = [:]
            for (id, cause) in mapping["cause_in"]?.mapping ?? [:] { causeIn[id.string ?? ""] = cause.string }
            var cells = Cells(fail: try cells(mapping["fail"]), cause: mapping["cause"]?.string, causeIn: causeIn)
            cells.causeUnprovenIn = Set((mapping["cause_unproven_in"]?.sequence ?? []).compactMap(\.string))
            faults.append((name, cells))
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

    /// Failed runs whose causes are not exactly the one the cause matrix
    /// names for `fault` (a run the fault must fail, and did).
    public func causeDifferences(fault: String, results: [CaseResult]) -> [String] {
        guard let cells = faults.first(where: { $0.name == fault })?.cells else { return [] }
        var out: [String] = []
        for result in results where cells.fail[result.id]?.contains(result.profile) == true && [.fail, .nonStrict].contains(result.verdict) {
            let named = (result.causes ?? []).map(\.id)
            guard let expected = cells.expectedCause(result.id) else {
                out.append("\(fault) x \(result.label): the cause matrix names no cause (the run says \(named))")
                continue
            }
            let unproven = cells.causeUnprovenIn.contains(result.id) && named.allSatisfy { $0.hasPrefix("expectation:") }
            if named != [expected] && !unproven { out.append("\(fault) x \(result.label): expected cause [\(expected)], got \(named)") }
        }
        return out
    }

    /// Causes the matrix names that the cause table does not have.
    public func unknownCauses() -> [String] {
        let known = Set(Causes.all.map(\.id))
        return faults.flatMap { fault in
            ([fault.cells.cause].compactMap { $0 } + fault.cells.causeIn.values).filter { !known.contains($0) }.map { "\(fault.name): \($0)" }
        }
    }

    /// Cells naming a case id or a dialect no scenario has: a typo would
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
