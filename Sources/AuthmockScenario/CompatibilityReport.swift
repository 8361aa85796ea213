public import Foundation

/// The published compatibility matrix: client libraries x cases, as Markdown
/// and as one self-contained HTML page with the evidence behind every cell.
/// Case runs that no library speaks (SKIP for all but the reference client)
/// are folded away, so the first screen is about what libraries do.
public enum CompatibilityReport {
    public struct Column: Sendable {
        public var name: String
        public var results: [CaseResult]
        /// Further runs of the same driver (a column measured several times):
        /// a case whose verdicts differ between runs is a race in the client,
        /// shown as what it is ("FAIL 2 of 8"), not as one run's verdict.
        public var otherRuns: [[CaseResult]] = []
        /// authmock's own reference client: shown, but not a library, so it
        /// does not keep a row that every library skips in view.
        public var isReference: Bool
        /// Read from a saved report (`authmock matrix --measured`), not run
        /// by this matrix: where it came from, said beside the column.
        public var measured: String?
        public init(name: String, results: [CaseResult], isReference: Bool = false, measured: String? = nil) {
            self.name = name
            self.results = results
            self.isReference = isReference
            self.measured = measured
        }
        /// The name as the page shows it: a measured column says so, and how many runs a column has.
        var title: String {
            let runs = otherRuns.isEmpty ? "" : "\(otherRuns.count + 1) runs"
            switch (measured != nil, runs.isEmpty) {
            case (true, true): return name + " (measured)"
            case (true, false): return name + " (measured, \(runs))"
            case (false, false): return name + " (\(runs))"
            case (false, true): return name
            }
        }
        /// Every run's result of a case run, in run order.
        func allResults(_ label: String) -> [CaseResult] {
            ([results] + otherRuns).compactMap { run in run.first { $0.label == label } }
        }
        /// The case run's cell: its verdict, the same in every run, or how
        /// often the worst of them happened ("FAIL 2 of 8").
        func cell(_ label: String) -> String {
            let verdicts = allResults(label).map(CompatibilityReport.cell)
            guard let first = verdicts.first else { return "—" }
            guard verdicts.contains(where: { $0 != first }) else { return first }
            let worst = CompatibilityReport.severity.first { verdicts.contains($0) } ?? first
            return "\(worst) \(verdicts.filter { $0 == worst }.count) of \(verdicts.count)"
        }
        var library: String {
            let first = results.first { $0.driver != nil }
            return "\(first?.driver ?? name) \(first?.driverVersion ?? "")".trimmingCharacters(in: .whitespaces)
        }
        /// The result whose evidence the page shows: of a run with the worst verdict, when runs differ.
        func result(_ label: String) -> CaseResult? {
            let all = allResults(label)
            let worst = CompatibilityReport.severity.first { verdict in all.contains { CompatibilityReport.cell($0) == verdict } }
            return all.first { CompatibilityReport.cell($0) == worst } ?? all.first
        }

        /// "19/28": cases of `level` passed (in every run), of those
        /// applicable (not skipped; a known failure is applicable and failed).
        func passed(_ level: Scenario.Level) -> String {
            let applicable = results.filter { $0.level == level.rawValue && ($0.verdict != .skip || $0.knownFailure != nil) }
            return "\(applicable.filter { cell($0.label) == "PASS" }.count)/\(applicable.count)"
        }
        /// "must 19/28, should 0/1"
        var summary: String { "must \(passed(.must)), should \(passed(.should))" }
    }

    /// PASS, FAIL, NON-STRICT, SKIP or ERROR; a known failure shows as
    /// FAIL (known), or NON-STRICT (known) when only `should` findings failed.
    static func cell(_ result: CaseResult?) -> String {
        guard let result else { return "—" }
        if result.knownFailure != nil { return result.failedFindings.contains(where: \.isMust) ? "FAIL (known)" : "NON-STRICT (known)" }
        return result.verdict.rawValue
    }

    /// Cell texts, worst first: what a case that did not always agree is shown as.
    static let severity = ["ERROR", "FAIL", "FAIL (known)", "NON-STRICT", "NON-STRICT (known)", "SKIP", "PASS"]

    static func why(_ result: CaseResult) -> String? {
        switch result.verdict {
        case .pass: return nil
        case .skip: return result.knownFailure ?? result.reason
        case .error: return result.reason
        case .fail, .nonStrict: return result.failedFindings.first.map { "\($0.expectation): \($0.message)" }
        }
    }

    /// Case-run labels in suite order, split into those some library runs
    /// and those every library skips.
    static func rows(_ columns: [Column]) -> (shown: [String], folded: [String]) {
        var labels: [String] = []
        for column in columns { for result in column.results where !labels.contains(result.label) { labels.append(result.label) } }
        let libraries = columns.filter { !$0.isReference }
        let shown = labels.filter { label in libraries.isEmpty || libraries.contains { !["SKIP", "—"].contains($0.cell(label)) } }
        return (shown, labels.filter { !shown.contains($0) })
    }

    static func name(_ label: String, in columns: [Column]) -> String {
        columns.lazy.compactMap { $0.result(label)?.name }.first ?? ""
    }

    /// The HTML cell's id, so the Markdown page can link a FAIL to its evidence.
    static func anchor(_ column: Column, _ label: String) -> String {
        "c-" + String((column.name + "-" + label).map { $0.isLetter || $0.isNumber ? $0 : "-" })
    }

    /// `htmlPage`: the HTML page's file name, for links from FAIL cells.
    public static func markdown(_ columns: [Column], htmlPage: String = "compatibility.html", date: Date = Date()) -> String {
        let day = date.formatted(Date.ISO8601FormatStyle().year().month().day())
        let libraries = columns.filter { !$0.isReference }
        var out = """
            # Compatibility

            What each client library gets right and wrong, case by case, generated by \
            `scripts/compatibility.sh` on \(day) with each driver in `drivers/` (do not edit \
            by hand): \(libraries.count) libraries in \(Set(libraries.map { language($0.name) }).count) languages, and authmock's \
            reference client. FAIL (known) is a failure listed, with its reason, in the driver's \
            expected-failures file (NON-STRICT (known): only `should` findings failed); CI runs these drivers and stays green on them while the \
            truth stays visible here. Every FAIL links to its wire evidence on the \
            [HTML page](\(htmlPage)).\(measuredNote(columns))

            | library | version | must cases passed | should cases passed | failed | non-strict | skipped |
            | --- | --- | --- | --- | --- | --- | --- |

            """
        for column in columns {
            let verdicts = column.results.map { column.cell($0.label) }
            out += "| \(column.title) | \(column.results.first?.driverVersion ?? "?") | \(column.passed(.must)) | \(column.passed(.should)) | "
            out +=
                "\(verdicts.filter { $0.hasPrefix("FAIL") || $0 == "ERROR" }.count) | \(verdicts.filter { $0 == "NON-STRICT" }.count) | \(verdicts.filter { $0 == "SKIP" }.count) |\n"
        }
        func table(_ labels: [String]) -> String {
            var text = "| case | name | " + columns.map(\.title).joined(separator: " | ") + " |\n| --- | --- |"
            text += String(repeating: " --- |", count: columns.count) + "\n"
            for label in labels {
                text += "| \(label) | \(name(label, in: columns).replacingOccurrences(of: "|", with: "\\|")) | "
                text +=
                    columns.map { column in
                        let verdict = column.cell(label)
                        return ["PASS", "SKIP", "—"].contains(verdict) ? verdict : "[\(verdict)](\(htmlPage)#\(anchor(column, label)))"
                    }.joined(separator: " | ") + " |\n"
            }
            return text
        }
        let (shown, folded) = rows(columns)
        out += "\n" + table(shown)
        if !folded.isEmpty {
            out += "\n<details><summary>\(folded.count) case runs that every library here skips (other dialects, GraphQL)</summary>\n\n"
            out += table(folded) + "\n</details>\n"
        }
        out += "\n## Why each failure fails\n"
        for column in columns {
            let failures = column.results.filter { result in
                column.allResults(result.label).contains { why($0) != nil && $0.verdict != .skip || $0.knownFailure != nil }
            }
            guard !failures.isEmpty else { continue }
            out += "\n### \(column.title)\n\n"
            // One line per client behaviour, then each case's own reason.
            let causes = Causes.groups(column.results)
            if !causes.isEmpty {
                out +=
                    "By cause: "
                    + causes.map { "\($0.cause.title) (\($0.labels.count) case run\($0.labels.count == 1 ? "" : "s"))" }.joined(separator: "; ")
                    + ".\n\n"
            }
            for result in failures {
                let shown = column.result(result.label) ?? result
                let reason = (why(shown) ?? why(result) ?? "").replacingOccurrences(of: "|", with: "\\|")
                out += "- **\(result.label)** \(column.cell(result.label)): \(reason)\n"
            }
        }
        return out
    }

    /// The columns read from saved reports, and where each came from.
    static func measuredNote(_ columns: [Column]) -> String {
        let measured = columns.filter { $0.measured != nil }
        guard !measured.isEmpty else { return "" }
        return
            " Columns marked (measured) were not run by this script: they are read from a saved JSON report of `authmock run` "
            + "(`authmock matrix --measured`), of a library CI cannot build; its driver's README says how it was measured: "
            + measured.map { "\($0.name) from \($0.measured!)" }.joined(separator: "; ") + "."
            + (measured.contains { !$0.otherRuns.isEmpty }
                ? " A column measured several times shows a case whose verdicts differed between runs as the worst of them and how often it happened (FAIL 2 of 8): a race in the client, not a verdict of one run."
                : "")
    }

    /// Writes the Markdown and/or HTML page; the Markdown links to the HTML
    /// page by its file name (the two are published side by side).
    public static func write(_ columns: [Column], markdown: String?, html: String?) throws {
        if let markdown {
            let page = html.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "compatibility.html"
            try Self.markdown(columns, htmlPage: page).write(toFile: markdown, atomically: true, encoding: .utf8)
        }
        if let html { try Self.html(columns).write(toFile: html, atomically: true, encoding: .utf8) }
    }

    /// The language of a driver named `language-library` (drivers/README.md's convention).
    static func language(_ driverName: String) -> String {
        String(driverName.prefix { $0 != "-" })
    }

    public static func html(_ columns: [Column], date: Date = Date()) -> String {
        func esc(_ text: String) -> String { Reports.escape(text) }
        let color = [
            "PASS": "#d4f4d4", "FAIL": "#f8d0d0", "FAIL (known)": "#f8e3c8", "NON-STRICT": "#fbf3c4", "NON-STRICT (known)": "#fbf3c4",
            "SKIP": "#e8e8e8", "ERROR": "#e0c8f0", "—": "#ffffff",
        ]
        var out = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>authmock compatibility</title>
            <style>
            body { font: 14px system-ui, sans-serif; margin: 2em; }
            table { border-collapse: collapse; margin-bottom: 1em; }
            th, td { border: 1px solid #bbb; padding: 4px 8px; vertical-align: top; }
            th { background: #f0f0f0; position: sticky; top: 0; }
            th.case { text-align: left; font-weight: normal; }
            details summary { cursor: pointer; font-weight: 600; }
            pre { font-size: 12px; white-space: pre-wrap; max-width: 60em; }
            td:target { outline: 3px solid #333; }
            </style></head><body>
            <h1>authmock compatibility</h1>
            <p>Generated \(esc(date.formatted(Date.ISO8601FormatStyle()))) by <code>scripts/compatibility.sh</code>. Click a cell for its evidence: the broken expectations and the server's journal of the case.\(esc(measuredNote(columns)))</p>
            <table><tr><th>library</th><th>version</th><th>summary</th></tr>

            """
        for column in columns {
            out +=
                "<tr><td>\(esc(column.title))</td><td>\(esc(column.results.first?.driverVersion ?? "?"))</td><td>\(esc(column.summary))</td></tr>\n"
        }
        out += "</table>\n"
        func table(_ labels: [String]) -> String {
            var text = "<table><tr><th>case</th>"
            // The column's name, as in the summary, over what the driver said it wraps.
            for column in columns { text += "<th>\(esc(column.title))<br><small>\(esc(column.library))</small></th>" }
            text += "</tr>\n"
            for label in labels {
                text += "<tr><th class=\"case\"><b>\(esc(label))</b> \(esc(name(label, in: columns)))</th>"
                for column in columns {
                    guard let result = column.result(label) else {
                        text += "<td>—</td>"
                        continue
                    }
                    let verdict = column.cell(label)
                    var detail = ""
                    let runs = column.allResults(label).map(cell)
                    if Set(runs).count > 1 {
                        detail += "<p>runs: \(esc(runs.joined(separator: ", "))); the evidence of a \(esc(cell(result))) run</p>"
                    }
                    // The reason of a skip or an error, or the known failure's; a FAIL's findings follow.
                    if result.verdict != .fail && result.verdict != .nonStrict, let reason = why(result) { detail += "<p>\(esc(reason))</p>" }
                    for cause in result.causes ?? [] { detail += "<p>cause: <b>\(esc(cause.title))</b></p>" }
                    for finding in result.failedFindings {
                        detail += "<p><b>\(esc(finding.expectation))</b>: \(esc(finding.message))</p>"
                    }
                    // The same time line as the run's own report, for a run that did not pass.
                    if result.verdict != .pass { detail += SequenceDiagram.svg(result) }
                    detail += "<pre>\(esc(result.journal.joined(separator: "\n")))</pre>"
                    text +=
                        "<td id=\"\(anchor(column, label))\" style=\"background:\(color[verdict] ?? color[String(verdict.prefix { $0 != " " })] ?? "#fff")\"><details><summary>\(esc(verdict))</summary>\(detail)</details></td>"
                }
                text += "</tr>\n"
            }
            return text + "</table>\n"
        }
        let (shown, folded) = rows(columns)
        out += table(shown)
        if !folded.isEmpty {
            out += "<details id=\"folded\"><summary>\(folded.count) case runs that every library here skips (other dialects, GraphQL)</summary>\n"
            out += table(folded) + "</details>\n"
        }
        // A link to a cell (from the Markdown page) opens its evidence, and the fold around it.
        out += """
            <script>
            function openTarget() {
              const cell = location.hash && document.getElementById(location.hash.slice(1));
              if (!cell) return;
              for (let node = cell; node; node = node.parentElement) if (node.tagName === "DETAILS") node.open = true;
              cell.querySelector("details").open = true;
              cell.scrollIntoView({ block: "center" });
            }
            addEventListener("hashchange", openTarget);
            openTarget();
            </script>

            """
        return out + "</body></html>\n"
    }
}
