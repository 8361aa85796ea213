import AuthmockCore
public import Foundation

/// `authmock run --html FILE` (and `report merge --html`): one page for one
/// run, readable without a server or a script. Causes first, each with the
/// case runs it explains; then every case run that did not pass, with its
/// findings, its time line and its journal; then the rest, folded. Each case
/// run has an anchor (`#case-1.1-oauth2`), so a CI log can link to it.
public enum RunReportPage {
    public struct Run: Sendable {
        public var driver: String
        public var seconds: Double
        public var suite: String?
        public var date: Date

        public init(driver: String, seconds: Double, suite: String?, date: Date = Date()) {
            self.driver = driver
            self.seconds = seconds
            self.suite = suite
            self.date = date
        }
    }

    public static func anchor(_ result: CaseResult) -> String {
        "case-\(result.id)-\(result.profile)".map { $0.isLetter || $0.isNumber || "-._".contains($0) ? String($0) : "_" }.joined()
    }

    public static func html(_ results: [CaseResult], run: Run) -> String {
        let esc = Reports.escape
        let name = results.lazy.compactMap(\.driver).first.map { $0 + (results.lazy.compactMap(\.driverVersion).first.map { " \($0)" } ?? "") }
        var counts: [Verdict: Int] = [:]
        for result in results { counts[result.verdict, default: 0] += 1 }
        let date = ISO8601DateFormatter().string(from: run.date)
        var page = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <title>authmock run: \(esc(name ?? run.driver))</title>
            <style>
            body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#111;max-width:1100px}
            h1{font-size:22px;margin:0 0 4px} h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}
            .meta{color:#555} .counts span{margin-right:14px;font-weight:600}
            .FAIL{color:#b91c1c} .ERROR{color:#7c2d12} .PASS{color:#166534} .SKIP{color:#6b7280} .NON-STRICT{color:#a16207}
            .case{border:1px solid #e5e7eb;border-radius:6px;padding:10px 14px;margin:14px 0}
            .case h3{margin:0 0 6px;font-size:15px} .cause{font-weight:600}
            .finding{margin:4px 0} .finding.failed::before{content:"✗ ";color:#b91c1c}
            .note{color:#a16207} pre{font-size:12px;overflow-x:auto;background:#f8f8f8;padding:8px}
            svg.timeline{display:block;margin:8px 0;max-width:100%;height:auto}
            svg .req.flagged rect{stroke:#dc2626} table{border-collapse:collapse} td,th{padding:2px 10px;text-align:left}
            </style></head><body>
            <h1>authmock run: \(esc(name ?? run.driver))</h1>
            <p class="meta">driver <code>\(esc(run.driver))</code> · authmock \(esc(AuthmockVersion.current))\(run.suite.map { " · built-in suite \(esc($0))" } ?? "") · \(esc(date)) · \(String(format: "%.1f", run.seconds)) s</p>
            <p class="counts">\(Verdict.allCases.map { "<span class=\"\($0.rawValue)\">\($0.rawValue) \(counts[$0] ?? 0)</span>" }.joined())\
            <span>\(Plural.count(results.count, "case run"))</span></p>\n
            """
        let groups = Causes.groups(results.filter { $0.verdict == .fail || $0.knownFailure != nil })
        if !groups.isEmpty {
            page += "<h2>Causes</h2>\n<ul class=\"causes\">\n"
            for group in groups {
                let id = group.cause.id
                let links = group.labels.compactMap { label in results.first { $0.label == label } }.map {
                    "<a href=\"#\(anchor($0))\">\(esc($0.label))</a>"
                }
                page +=
                    "<li><span class=\"cause\" data-cause=\"\(esc(id))\">\(esc(group.cause.title))</span> <code>[\(esc(id))]</code>: \(Plural.count(group.labels.count, "case run")): \(links.joined(separator: ", "))</li>\n"
            }
            page += "</ul>\n"
        }
        let notPassed = results.filter { $0.verdict != .pass && !($0.verdict == .skip && $0.knownFailure == nil) }
        if !notPassed.isEmpty {
            page += "<h2>Case runs that did not pass</h2>\n"
            for result in notPassed { page += section(result, open: true) }
        }
        let passed = results.filter { $0.verdict == .pass }
        if !passed.isEmpty {
            page += "<h2>Passed (\(passed.count))</h2>\n"
            for result in passed { page += section(result, open: false) }
        }
        let skipped = results.filter { $0.verdict == .skip && $0.knownFailure == nil }
        if !skipped.isEmpty {
            page += "<h2>Skipped (\(skipped.count))</h2>\n<table>\n"
            for result in skipped {
                page += "<tr id=\"\(anchor(result))\"><td>\(esc(result.label))</td><td>\(esc(result.reason ?? ""))</td></tr>\n"
            }
            page += "</table>\n"
        }
        return page + "</body></html>\n"
    }

    /// One case run: verdict, cause, notes, findings, picture, journal.
    static func section(_ result: CaseResult, open: Bool) -> String {
        let esc = Reports.escape
        var out =
            "<section class=\"case \(result.verdict.rawValue)\" id=\"\(anchor(result))\" data-verdict=\"\(result.verdict.rawValue)\">\n"
            + "<h3><span class=\"\(result.verdict.rawValue)\">\(result.verdict.rawValue)</span> \(esc(result.label)) \(esc(result.name)) "
            + "<small>(\(String(format: "%.2f", result.seconds)) s, \(esc(result.file)))</small></h3>\n"
        if let reason = result.reason { out += "<p>\(esc(reason))</p>\n" }
        for cause in result.causes ?? [] {
            out += "<p>cause: <span class=\"cause\" data-cause=\"\(esc(cause.id))\">\(esc(cause.title))</span></p>\n"
            // The requests that show it, open: they are why the line says what it says.
            if let seen = cause.evidence, !seen.isEmpty { out += "<pre class=\"seen\">\(esc(seen.joined(separator: "\n")))</pre>\n" }
        }
        for note in result.notes ?? [] { out += "<p class=\"note\">note: \(esc(note))</p>\n" }
        for finding in result.failedFindings {
            out +=
                "<div class=\"finding failed\" data-expectation=\"\(esc(finding.expectation))\"><b>\(esc(finding.expectation))</b>: \(esc(finding.message))"
            if let rule = finding.rule { out += " <small>(\(esc(rule)))</small>" }
            if !finding.evidence.isEmpty {
                out += "<details><summary>evidence</summary><pre>\(esc(finding.evidence.joined(separator: "\n")))</pre></details>"
            }
            out += "</div>\n"
        }
        let picture = SequenceDiagram.svg(result)
        if !picture.isEmpty {
            out += open ? picture : "<details><summary>time line</summary>\(picture)</details>\n"
        }
        if !result.journal.isEmpty {
            out +=
                "<details><summary>journal (\(Plural.count(result.journal.count, "request")))</summary><pre>\(esc(result.journal.joined(separator: "\n")))</pre></details>\n"
        }
        if result.verdict == .error, !result.driverStderr.isEmpty {
            out += "<details open><summary>driver stderr</summary><pre>\(esc(String(result.driverStderr.suffix(4000))))</pre></details>\n"
        }
        return out + "</section>\n"
    }
}

/// Counts that agree in number: "1 case run", "2 case runs".
public enum Plural {
    public static func count(_ n: Int, _ noun: String, plural: String? = nil) -> String {
        "\(n) \(n == 1 ? noun : plural ?? noun + (noun.hasSuffix("s") || noun.hasSuffix("sh") || noun.hasSuffix("ch") ? "es" : "s"))"
    }
}
