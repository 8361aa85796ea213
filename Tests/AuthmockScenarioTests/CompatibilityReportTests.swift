import Foundation
import Testing

@testable import AuthmockScenario

/// The published matrix: summaries, folded SKIP rows and links to evidence.
struct CompatibilityReportTests {
    static func result(_ id: String, _ profile: String, _ verdict: Verdict, level: String = "must", known: String? = nil) -> CaseResult {
        var result = CaseResult(
            id: id, name: "case \(id) name", profile: profile, level: level, file: "\(id).yaml", verdict: verdict, findings: [], calls: [],
            journal: ["#1 GET /api/items -> 401"], driverStderr: "", seconds: 0, driver: "lib", driverVersion: "1.0")
        result.knownFailure = known
        if known != nil { result.reason = known }
        if verdict == .fail || known != nil { result.findings = [Finding(expectation: "refreshes", passed: false, message: "saw 2", evidence: [])] }
        return result
    }

    /// A listed failure whose failed findings are all `should` reads NON-STRICT (known).
    @Test func aKnownShouldFailureIsNonStrictKnown() {
        var known = Self.result("5.4", "oauth2", .skip, known: "hands the 503 to the app")
        #expect(CompatibilityReport.cell(known) == "FAIL (known)")
        known.findings = [Finding(expectation: "outcomes", passed: false, message: "1 http_error", evidence: [], level: "should")]
        #expect(CompatibilityReport.cell(known) == "NON-STRICT (known)")
    }

    static let columns = [
        CompatibilityReport.Column(
            name: "reference",
            results: [result("1.1", "oauth2", .pass), result("1.1", "envelope", .pass), result("6.1", "oauth2", .pass, level: "should")],
            isReference: true),
        CompatibilityReport.Column(
            name: "python-lib",
            results: [
                result("1.1", "oauth2", .skip, known: "no lock (lib.py L10)"), result("1.1", "envelope", .skip),
                result("6.1", "oauth2", .nonStrict, level: "should"),
            ]),
        CompatibilityReport.Column(
            name: "ruby-lib",
            results: [result("1.1", "oauth2", .fail), result("1.1", "envelope", .skip), result("6.1", "oauth2", .pass, level: "should")]),
    ]

    @Test func summariesCountMustAndShouldCasesAgainstTheApplicableOnes() {
        #expect(Self.columns[0].summary == "must 2/2, should 1/1")
        // The known failure is applicable and failed; the SKIP is not applicable.
        #expect(Self.columns[1].summary == "must 0/1, should 0/1")
        #expect(Self.columns[2].summary == "must 0/1, should 1/1")
    }

    @Test func rowsEveryLibrarySkipsAreFoldedAndFailuresLinkToTheirEvidence() throws {
        let markdown = CompatibilityReport.markdown(Self.columns, htmlPage: "compat.html")
        let html = CompatibilityReport.html(Self.columns)
        #expect(markdown.contains("2 libraries in 2 languages"))
        let (shown, folded) = CompatibilityReport.rows(Self.columns)
        #expect(shown == ["1.1 [oauth2]", "6.1 [oauth2]"])
        #expect(folded == ["1.1 [envelope]"])
        let fold = try #require(markdown.range(of: "<details>"))
        #expect(
            markdown[..<fold.lowerBound].contains(
                "| 1.1 [oauth2] | case 1.1 name | PASS | [FAIL (known)](compat.html#c-python-lib-1-1--oauth2-) | [FAIL](compat.html#c-ruby-lib-1-1--oauth2-) |"
            ))
        #expect(markdown[fold.upperBound...].contains("| 1.1 [envelope] | case 1.1 name | PASS | SKIP | SKIP |"))
        #expect(markdown.contains("[NON-STRICT](compat.html#c-python-lib-6-1--oauth2-)"))
        // Every link has its cell on the HTML page.
        for anchor in ["c-python-lib-1-1--oauth2-", "c-ruby-lib-1-1--oauth2-", "c-python-lib-6-1--oauth2-"] {
            #expect(html.contains("<td id=\"\(anchor)\""))
        }
        #expect(html.contains("<details id=\"folded\"><summary>1 case runs that every library here skips"))
        #expect(markdown.contains("- **1.1 [oauth2]** FAIL (known): no lock (lib.py L10)"))
    }
}

/// A column measured several times (issue 55): a case whose verdicts differ
/// between runs is a race in the client and reads as one ("FAIL 2 of 8"),
/// with a failing run's evidence; a case that always agreed reads as before.
struct MultiRunColumnTests {
    typealias R = CompatibilityReportTests

    static func column(_ verdicts: [Verdict]) -> CompatibilityReport.Column {
        var column = CompatibilityReport.Column(
            name: "swift-moya-plugin-refresh", results: [R.result("3.3.1", "oauth2", verdicts[0]), R.result("1.1", "oauth2", .pass)],
            measured: "`a.json`")
        for verdict in verdicts.dropFirst() { column.otherRuns.append([R.result("3.3.1", "oauth2", verdict), R.result("1.1", "oauth2", .pass)]) }
        return column
    }

    @Test func aCaseThatDifferedBetweenRunsShowsHowOftenItFailed() throws {
        let column = Self.column([.pass, .fail, .pass, .pass, .fail, .pass, .pass, .pass])
        #expect(column.cell("3.3.1 [oauth2]") == "FAIL 2 of 8")
        #expect(column.cell("1.1 [oauth2]") == "PASS", "a case every run passed reads PASS")
        #expect(column.result("3.3.1 [oauth2]")?.verdict == .fail, "the evidence shown is a failing run's")
        #expect(column.title == "swift-moya-plugin-refresh (measured, 8 runs)")
        #expect(column.summary == "must 1/2, should 0/0", "a case passes only when it passed in every run")
        let markdown = CompatibilityReport.markdown([column])
        #expect(markdown.contains("| 3.3.1 [oauth2] | case 3.3.1 name | [FAIL 2 of 8](compatibility.html#"))
        #expect(markdown.contains("- **3.3.1 [oauth2]** FAIL 2 of 8: refreshes: saw 2"))
        #expect(markdown.contains("FAIL 2 of 8): a race in the client"))
        let html = CompatibilityReport.html([column])
        #expect(
            html.contains("<summary>FAIL 2 of 8</summary><p>runs: PASS, FAIL, PASS, PASS, FAIL, PASS, PASS, PASS; the evidence of a FAIL run</p>"))
        #expect(html.contains("background:#f8d0d0\"><details><summary>FAIL 2 of 8"), "coloured as a FAIL")
        // One run, or runs that agree: the verdict alone.
        #expect(Self.column([.fail]).cell("3.3.1 [oauth2]") == "FAIL")
        #expect(Self.column([.fail, .fail, .fail]).cell("3.3.1 [oauth2]") == "FAIL")
        #expect(Self.column([.pass, .nonStrict]).cell("3.3.1 [oauth2]") == "NON-STRICT 1 of 2")
    }
}
