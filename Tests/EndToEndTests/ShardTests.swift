import Foundation
import Testing

/// `authmock run --shard K/N` and `authmock report merge`: the shards of a
/// run together give exactly the verdicts of the run, through the real binary.
@Suite(.serialized) struct ShardTests {
    static var referenceDriver: String {
        get throws { try authmockBinary().deletingLastPathComponent().appendingPathComponent("authmock-reference-driver").path }
    }

    /// The reference client, with a client fault so that some cases FAIL and the merge has verdicts of every kind to keep.
    static func run(_ extra: [String], json: URL) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await runAuthmock(
            [
                "run", "--driver", "\(try referenceDriver) --fault refresh-per-401", "--case", "1.*", "--case", "2.1", "--case", "6.*", "--case",
                "11.1", "--jobs", "16", "--json", json.path,
            ]
                + extra)
    }

    static func verdicts(_ json: URL) throws -> [String: String] {
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any])
        let cases = try #require(report["cases"] as? [[String: Any]])
        var verdicts: [String: String] = [:]
        for result in cases {
            let label = "\(result["id"] as? String ?? "?") [\(result["profile"] as? String ?? "?")]"
            #expect(verdicts[label] == nil, "\(label) twice")
            verdicts[label] = result["verdict"] as? String
        }
        return verdicts
    }

    @Test func threeShardsMergedGiveTheVerdictsOfOneRun() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("authmock-shards-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let whole = directory.appendingPathComponent("whole.json")
        let unsharded = try await Self.run([], json: whole)
        #expect(unsharded.status == 1, "the faulty client fails some cases: \(unsharded.stdout)")
        var parts: [URL] = []
        var sizes: [Int] = []
        for k in 1...3 {
            let part = directory.appendingPathComponent("shard-\(k).json")
            let result = try await Self.run(["--shard", "\(k)/3"], json: part)
            #expect(result.stdout.contains("shard \(k)/3 of"), "\(result.stdout)")
            parts.append(part)
            sizes.append(try Self.verdicts(part).count)
        }
        let expected = try Self.verdicts(whole)
        #expect(sizes.reduce(0, +) == expected.count && sizes.max()! - sizes.min()! <= 1, "shards of \(sizes) for \(expected.count) case runs")
        let merged = directory.appendingPathComponent("merged.json"), junit = directory.appendingPathComponent("merged.xml")
        let html = directory.appendingPathComponent("matrix.html"), markdown = directory.appendingPathComponent("matrix.md")
        let merge = try await runAuthmock(
            ["report", "merge"] + parts.map(\.path) + [
                "--json", merged.path, "--junit", junit.path, "--markdown", markdown.path, "--html", html.path,
            ])
        #expect(merge.status == unsharded.status, "\(merge.stdout)\n\(merge.stderr)")
        #expect(try Self.verdicts(merged) == expected)
        // The printed counts are the unsharded run's.
        let counts = { (text: String) in
            text.split(separator: "\n").filter { $0.range(of: #"^\d+ passed, \d+ failed"#, options: .regularExpression) != nil }
        }
        #expect(counts(merge.stdout) == counts(unsharded.stdout))
        #expect(try String(contentsOf: junit, encoding: .utf8).contains("<testsuite"))
        #expect(try String(contentsOf: markdown, encoding: .utf8).contains("compatibility.html#"))
        // One driver's merged shards: the run's own report, a section per case run.
        let page = try String(contentsOf: html, encoding: .utf8)
        #expect(page.contains("<h1>authmock run: ") && page.contains("id=\"case-"), "\(page.prefix(600))")

        // Each shard once: the same report twice is refused.
        let twice = try await runAuthmock(["report", "merge", parts[0].path, parts[0].path])
        #expect(twice.status == 2 && twice.stderr.contains("also in"), "\(twice.stderr)")
    }

    /// `authmock matrix --measured`: a column from a saved report (a library
    /// measured where it builds), its verdicts as saved, marked as measured.
    @Test func aSavedReportIsAMeasuredColumn() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("authmock-measured-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let saved = directory.appendingPathComponent("saved.json")
        _ = try await Self.run([], json: saved)
        let markdown = directory.appendingPathComponent("m.md"), html = directory.appendingPathComponent("m.html")
        let matrix = try await runAuthmock(["matrix", "--measured", "faulty=\(saved.path)", "--markdown", markdown.path, "--html", html.path])
        #expect(matrix.status == 0, "\(matrix.stdout)\n\(matrix.stderr)")
        let page = try String(contentsOf: markdown, encoding: .utf8)
        #expect(page.contains("| faulty (measured) |") && page.contains("faulty from `\(saved.path)`"), "\(page.prefix(1_500))")
        // Each saved verdict is the cell's.
        for (label, verdict) in try Self.verdicts(saved) {
            let row = try #require(page.split(separator: "\n").first { $0.hasPrefix("| \(label) |") }, "no row for \(label)")
            #expect(
                row.hasSuffix(
                    verdict == "PASS"
                        ? "| PASS |" : "](m.html#c-faulty-\(label.map { $0.isLetter || $0.isNumber ? $0 : "-" }.map(String.init).joined())) |"),
                "\(row)")
            #expect(verdict == "PASS" || row.contains("[\(verdict)"), "\(row)")
        }
        #expect(try String(contentsOf: html, encoding: .utf8).contains("faulty (measured)"))

        // The same name twice: one column of two runs (verdicts that agree read as before).
        let twice = try await runAuthmock([
            "matrix", "--measured", "faulty=\(saved.path)", "--measured", "faulty=\(saved.path)", "--markdown", markdown.path, "--html", html.path,
        ])
        #expect(twice.status == 0, "\(twice.stdout)\n\(twice.stderr)")
        let twoRuns = try String(contentsOf: markdown, encoding: .utf8)
        #expect(twoRuns.contains("| faulty (measured, 2 runs) |"), "\(twoRuns.prefix(1_500))")

        let unreadable = try await runAuthmock([
            "matrix", "--measured", "x=\(directory.appendingPathComponent("none.json").path)", "--markdown", markdown.path,
        ])
        #expect(unreadable.status == 2 && unreadable.stderr.contains("--measured x:"), "\(unreadable.stderr)")
    }

    @Test(arguments: ["0/3", "4/3", "1/0", "2", "a/b"])
    func badShardsAreUsageErrors(_ shard: String) async throws {
        let result = try await runAuthmock(["run", "--driver", "true", "--shard", shard])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--shard takes K/N"), "\(result.stderr)")
    }

    @Test func aFileThatIsNotAReportIsAUsageError() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("not-a-report-\(UUID().uuidString).json")
        try Data("{\"hello\": 1}".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try await runAuthmock(["report", "merge", file.path])
        #expect(result.status == 2)
        #expect(result.stderr.contains("not an authmock JSON report"), "\(result.stderr)")
    }
}
