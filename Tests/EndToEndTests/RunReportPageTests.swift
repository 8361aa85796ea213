import Foundation
import TestSupport
import Testing

/// `authmock run --html`: the report of one run, read in headless Chromium
/// (Debian's `chromium`, which scripts/test.sh installs). The page must
/// render, name the cause, draw the time line with token labels told apart,
/// and outline the requests the failed findings point at.
@Suite struct RunReportPageTests {
    static let chromium = "/usr/bin/chromium"

    /// The DOM Chromium builds from a page.
    static func dom(_ page: URL) async throws -> String {
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("authmock-chromium-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: profile) }
        let run = try await runProcess(
            chromium,
            ["--headless=new", "--no-sandbox", "--disable-gpu", "--user-data-dir=\(profile.path)", "--dump-dom", page.absoluteString])
        #expect(run.status == 0, "\(run.stderr.suffix(2000))")
        return run.stdout
    }

    /// A client without single flight, on 1.1: the page's cause, its case's
    /// findings, and a time line where the refreshes side by side are
    /// outlined as the finding's evidence, each token by its own label.
    @Test func aFailingRunIsDrawnWithItsCauseAndTokens() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.chromium), "scripts/test.sh installs chromium")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("authmock-html-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let page = directory.appendingPathComponent("report.html")
        let run = try await runAuthmock([
            "run", "--driver", "\(try referenceDriver()) --fault refresh-per-401", "--case", "1.1", "--case", "5.1", "--profile", "oauth2",
            "--html", page.path,
        ])
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("report: \(page.path)"), "\(run.stdout)")
        let dom = try await Self.dom(page)
        #expect(dom.contains("<h1>authmock run: authmock-reference"), "\(dom.prefix(800))")
        // Causes first, linked to the case run.
        #expect(dom.contains("data-cause=\"no-single-flight\""))
        #expect(dom.contains("href=\"#case-1.1-oauth2\""))
        // The failing case: its findings and its picture.
        #expect(dom.contains("id=\"case-1.1-oauth2\" data-verdict=\"FAIL\""))
        #expect(dom.contains("data-expectation=\"superfluous_refreshes\""))
        // The cause's own evidence: the refresh made beside one in flight, and that one.
        #expect(dom.contains("<pre class=\"seen\">") && dom.contains("[refresh]"), "\(dom.prefix(3000))")
        #expect(dom.contains("<svg") && dom.contains("class=\"timeline\""))
        // Refreshes the finding points at are outlined; tokens are told apart.
        #expect(dom.range(of: #"class="req refresh flagged superfluous""#) != nil, "no superfluous refresh outlined")
        #expect(dom.contains("refresh R1 200→A2,R2"), "the rotation's tokens by label")
        #expect(dom.contains(">A1 401"), "the expired token by label")
        // The passing case is there, folded.
        #expect(dom.contains("id=\"case-5.1-oauth2\" data-verdict=\"PASS\""))
    }

    /// 9.5 with a client whose cancel takes its refresh down: the page names
    /// the cause, and the time line marks where the app cancelled the call,
    /// which ends `cancelled`; the JSON report says when (`calls[].cancelled`).
    @Test func aCancelledCallIsMarkedOnTheTimeLine() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.chromium), "scripts/test.sh installs chromium")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("authmock-html-cancel-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let page = directory.appendingPathComponent("report.html")
        let json = directory.appendingPathComponent("report.json")
        let run = try await runAuthmock([
            "run", "--driver", "\(try referenceDriver()) --fault cancel-aborts-refresh", "--case", "9.5", "--profile", "oauth2",
            "--html", page.path, "--json", json.path,
        ])
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        let dom = try await Self.dom(page)
        #expect(dom.contains("data-cause=\"cancel-breaks-refresh\""))
        #expect(dom.contains("<g class=\"cancel\">"), "no cancel marked on the time line")
        #expect(dom.contains(">cancelled</text>"), "the cancelled call's outcome")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any])
        let calls = try #require(((report["cases"] as? [[String: Any]])?.first)?["calls"] as? [[String: Any]])
        let cancelled = calls.filter { $0["cancelled"] != nil }
        #expect(cancelled.count == 1 && cancelled.first?["outcome"] as? String == "cancelled", "\(calls)")
    }

    /// Case 9.6: the extension's calls are marked as its instance's on the
    /// time line and in the JSON, and the cause is the instances' copies.
    @Test func anotherInstancesCallsAreMarkedOnTheTimeLine() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.chromium), "scripts/test.sh installs chromium")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("authmock-html-instances-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let page = directory.appendingPathComponent("report.html")
        let json = directory.appendingPathComponent("report.json")
        let run = try await runAuthmock([
            "run", "--driver", "\(try referenceDriver()) --fault instances-keep-own-copy", "--case", "9.6", "--profile", "oauth2",
            "--html", page.path, "--json", json.path,
        ])
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("c4 GET /api/extension (instance 2) -> reauth_required"), "\(run.stdout)")
        let dom = try await Self.dom(page)
        #expect(dom.contains("data-cause=\"instances-keep-own-copies\""))
        #expect(dom.contains("c2 [instance 2] GET /api/extension"), "the extension's lane")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any])
        let calls = try #require(((report["cases"] as? [[String: Any]])?.first)?["calls"] as? [[String: Any]])
        #expect(calls.map { $0["instance"] as? Int } == [nil, 2, nil, 2, nil, 2], "\(calls)")
    }

    /// `report merge --html` of one driver's shards is the same page.
    @Test func mergedShardsGiveTheSamePage() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("authmock-html-merge-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var parts: [String] = []
        for k in 1...2 {
            let part = directory.appendingPathComponent("part-\(k).json").path
            _ = try await runAuthmock([
                "run", "--driver", "\(try referenceDriver()) --fault refresh-per-401", "--case", "1.1", "--case", "1.2", "--profile", "oauth2",
                "--shard", "\(k)/2", "--json", part,
            ])
            parts.append(part)
        }
        let page = directory.appendingPathComponent("merged.html")
        let merge = try await runAuthmock(["report", "merge"] + parts + ["--html", page.path])
        #expect(merge.status == 1, "\(merge.stdout)\(merge.stderr)")
        let html = try String(contentsOf: page, encoding: .utf8)
        #expect(html.contains("id=\"case-1.1-oauth2\"") && html.contains("id=\"case-1.2-oauth2\""))
        #expect(html.contains("data-cause=\"second-refresh-for-late-401\"") && html.contains("<svg"))
    }
}
