import AuthmockCore
import Foundation

/// Console, JUnit and JSON forms of a run's results.
public enum Reports {
    /// One progress line per finished case; `colour` for a terminal (ANSI).
    public static func progressLine(_ result: CaseResult, colour: Bool = false) -> String {
        let seconds = String(format: "%.2f s", result.seconds)
        let verdict = result.verdict.rawValue.rightPadded(to: 10)
        var line =
            "\(colour ? paint(verdict, result.verdict) : verdict) \(result.label.rightPadded(to: 24)) \(result.name) (\(seconds))"
        if let reason = result.reason, result.verdict != .pass { line += "\n           \(reason)" }
        for note in result.notes ?? [] { line += "\n           note: \(note)" }
        return line
    }

    /// A verdict in its colour on a terminal.
    public static func paint(_ text: String, _ verdict: Verdict) -> String {
        let code =
            switch verdict {
            case .pass: "32"
            case .fail: "31"
            case .error: "35"
            case .nonStrict: "33"
            case .skip: "90"
            }
        return "\u{1B}[\(code)m\(text)\u{1B}[0m"
    }

    /// What a person fixing their client reads: the failures grouped by
    /// cause, each cause named once with one case's evidence for it and the
    /// other case runs listed; then every failure no shared cause explains,
    /// with its own evidence. `everyCase`: each failed case's evidence too.
    public static func failures(_ results: [CaseResult], everyCase: Bool = false) -> String {
        // NON-STRICT runs broke only `should` expectations: shown with their evidence, not as failures.
        let failed = results.filter { $0.verdict == .fail }
        let shared = Causes.groups(failed).filter { $0.labels.count > 1 }
        var out = ""
        var shown = Set<String>()
        if !shared.isEmpty { out += "\nFailures by cause (one cause, once; each case's evidence: --verbose)\n" }
        for group in shared {
            let example = failed.first { $0.label == group.labels[0] }
            out += "\n\(Plural.count(group.labels.count, "case run")): \(group.cause.title)  [\(group.cause.id)]\n"
            out += "  " + group.labels.joined(separator: ", ") + "\n"
            if let example, !shown.contains(example.label) {
                out += "  for example:" + details(example).replacingOccurrences(of: "\n", with: "\n  ").dropLast(2)
                shown.insert(example.label)
            }
        }
        let grouped = Set(shared.map(\.cause.id))
        for result in results where !shown.contains(result.label) {
            let covered = result.verdict != .error && !(result.causes ?? []).isEmpty && (result.causes ?? []).allSatisfy { grouped.contains($0.id) }
            if everyCase || !covered { out += details(result) }
        }
        return out
    }

    /// One case's broken expectations with their evidence.
    public static func details(_ result: CaseResult) -> String {
        guard [.fail, .nonStrict, .error].contains(result.verdict) else { return "" }
        var out = "\n\(result.verdict.rawValue) \(result.label) \(result.name)  (\(result.file))\n"
        if let reason = result.reason { out += "  \(reason)\n" }
        if let causes = result.causes, !causes.isEmpty {
            out += "  cause: \(causes.map(\.title).joined(separator: "; "))\n"
            // The requests that show it, where a cause names them.
            for line in causes.flatMap({ $0.evidence ?? [] }) { out += "    seen: \(line)\n" }
        }
        for note in result.notes ?? [] { out += "  note: \(note)\n" }
        for finding in result.failedFindings {
            out += "  x \(finding.expectation): \(finding.message)\n"
            for line in finding.evidence { out += "      \(line)\n" }
        }
        if result.verdict == .error, !result.driverStderr.isEmpty {
            out += "  driver stderr (last lines):\n" + result.driverStderr.split(separator: "\n").suffix(15).map { "      \($0)\n" }.joined()
        }
        return out
    }

    /// Whether the console shows this result's line: a plain SKIP (another
    /// dialect, a missing capability) is folded into one summary line unless
    /// asked for; a known failure is shown, it was judged.
    public static func shownByDefault(_ result: CaseResult) -> Bool { result.verdict != .skip || result.knownFailure != nil }

    /// The plain SKIPs folded into one line per reason, most first:
    /// `129 case runs skipped (--show-skips lists them): 117 the driver ...`.
    public static func foldedSkips(_ results: [CaseResult]) -> String {
        let skipped = results.filter { !shownByDefault($0) }
        guard !skipped.isEmpty else { return "" }
        let byReason = Dictionary(grouping: skipped) { $0.reason ?? "no reason given" }
            .map { (reason: $0.key, count: $0.value.count) }
            .sorted { ($0.count, $1.reason) > ($1.count, $0.reason) }
        var out = "\n\(Plural.count(skipped.count, "case run")) skipped (--show-skips lists them):\n"
        for group in byReason { out += "  \(String(group.count).leftPadded(to: 4))  \(group.reason)\n" }
        return out
    }

    /// `suite`: the built-in suite's version when it took part. The closing
    /// line counts exactly what the table above it counts: failed is FAIL and
    /// ERROR, skipped is SKIP and NON-STRICT (as in JUnit).
    public static func summary(_ results: [CaseResult], seconds: Double, suite: String? = nil) -> String {
        var counts: [Verdict: Int] = [:]
        for result in results { counts[result.verdict, default: 0] += 1 }
        var out = "\n" + "verdict     count\n"
        for verdict in Verdict.allCases { out += "\(verdict.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0))\(counts[verdict] ?? 0)\n" }
        out += "\(Plural.count(results.count, "case run")) in \(String(format: "%.1f", seconds)) s\n"
        if let suite { out += "suite: built-in \(suite)\n" }
        let failed = (counts[.fail] ?? 0) + (counts[.error] ?? 0)
        let skipped = (counts[.skip] ?? 0) + (counts[.nonStrict] ?? 0)
        out +=
            "failed = FAIL \(counts[.fail] ?? 0) + ERROR \(counts[.error] ?? 0); skipped = SKIP \(counts[.skip] ?? 0) + NON-STRICT \(counts[.nonStrict] ?? 0)\n"
        // A closing line test harnesses recognise.
        out += "\(counts[.pass] ?? 0) passed, \(failed) failed, \(skipped) skipped\n"
        return out
    }

    /// JUnit XML: one test case per (case, dialect); FAIL and ERROR map to
    /// failure and error, SKIP and NON-STRICT to skipped.
    public static func junit(_ results: [CaseResult], seconds: Double, suite: String? = nil) -> String {
        let failures = results.filter { $0.verdict == .fail }.count
        let errors = results.filter { $0.verdict == .error }.count
        let skipped = results.filter { $0.verdict == .skip || $0.verdict == .nonStrict }.count
        var xml = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        xml +=
            #"<testsuites name="authmock" tests="\#(results.count)" failures="\#(failures)" errors="\#(errors)" skipped="\#(skipped)" time="\#(String(format: "%.3f", seconds))">"#
            + "\n"
        for (profile, group) in Dictionary(grouping: results, by: \.profile).sorted(by: { $0.key < $1.key }) {
            xml +=
                #"  <testsuite name="authmock.\#(escape(profile))" tests="\#(group.count)" failures="\#(group.filter { $0.verdict == .fail }.count)" errors="\#(group.filter { $0.verdict == .error }.count)" skipped="\#(group.filter { $0.verdict == .skip || $0.verdict == .nonStrict }.count)">"#
                + "\n"
            xml += "    <properties>\n"
            xml += #"      <property name="authmock.version" value="\#(escape(AuthmockVersion.current))"/>"# + "\n"
            if let suite { xml += #"      <property name="authmock.suite" value="\#(escape(suite))"/>"# + "\n" }
            xml += "    </properties>\n"
            for result in group {
                xml +=
                    #"    <testcase classname="authmock.\#(escape(profile))" name="\#(escape("\(result.id) \(result.name)"))" file="\#(escape(result.file))" time="\#(String(format: "%.3f", result.seconds))">"#
                let text = escape(details(result))
                switch result.verdict {
                case .fail:
                    xml +=
                        "\n" + #"      <failure message="\#(escape(result.failedFindings.first?.message ?? "failed"))">\#(text)</failure>"# + "\n    "
                case .error: xml += "\n" + #"      <error message="\#(escape(result.reason ?? "error"))">\#(text)</error>"# + "\n    "
                case .skip: xml += "\n" + #"      <skipped message="\#(escape(result.reason ?? "skipped"))"/>"# + "\n    "
                case .nonStrict:
                    xml += "\n" + #"      <skipped message="NON-STRICT: \#(escape(result.failedFindings.first?.message ?? ""))"/>"# + "\n    "
                case .pass: break
                }
                if !result.driverStderr.isEmpty {
                    xml += "\n      <system-err>\(escape(String(result.driverStderr.suffix(4000))))</system-err>\n    "
                }
                xml += "</testcase>\n"
            }
            xml += "  </testsuite>\n"
        }
        return xml + "</testsuites>\n"
    }

    /// Version of the JSON report's shape (docs/report.schema.json); it
    /// changes only when a field changes meaning or goes away.
    public static let reportVersion = 1

    /// The JSON report (docs/report.schema.json): the run, the suite it ran
    /// (authmock version and a digest of every case file, so results of
    /// different versions are compared only where a case is the same), and
    /// every case with its findings, the rule each checks, and the journal.
    public static func json(_ results: [CaseResult], seconds: Double, driver: String, suite: String? = nil) -> String {
        struct Suite: Encodable {
            var version = AuthmockVersion.current
            /// The built-in suite's version, when it took part.
            var builtIn: String?
            /// Case file -> SHA-256 of its text.
            var digests: [String: String]
        }
        struct Report: Encodable {
            var reportVersion = Reports.reportVersion
            var tool = "authmock"
            var suite: Suite
            var driver: String
            var driverName: String?
            var driverVersion: String?
            var driverHello: String?
            var seconds: Double
            var summary: [String: Int]
            /// Failed case runs grouped by the client behaviour they come from.
            var causes: [CauseGroup]
            var cases: [CaseResult]
        }
        struct CauseGroup: Encodable {
            var id: String
            var title: String
            var caseRuns: [String]
        }
        var summary: [String: Int] = [:]
        for verdict in Verdict.allCases { summary[verdict.rawValue] = 0 }
        for result in results { summary[result.verdict.rawValue, default: 0] += 1 }
        var digests: [String: String] = [:]
        for result in results { if let digest = result.digest { digests[result.file] = digest } }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let report = Report(
            suite: Suite(builtIn: suite, digests: digests), driver: driver, driverName: results.lazy.compactMap(\.driver).first,
            driverVersion: results.lazy.compactMap(\.driverVersion).first, driverHello: results.lazy.compactMap(\.driverHello).first,
            seconds: seconds, summary: summary,
            causes: Causes.groups(results).map { CauseGroup(id: $0.cause.id, title: $0.cause.title, caseRuns: $0.labels) }, cases: results)
        let data = (try? encoder.encode(report)) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "\n", "\t", "\r": out.unicodeScalars.append(scalar)
            default:
                // XML 1.0 forbids most control characters, whatever a driver printed.
                if scalar.value < 0x20 { out += "?" } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out
    }
}

extension String {
    /// The text right-aligned in `width` columns.
    func leftPadded(to width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
    /// Padded to `width`, never cut (a long dialect name stays whole).
    func rightPadded(to width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}
