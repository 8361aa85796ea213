@testable import AuthmockDialect
@testable import AuthmockScenario
@testable import AuthmockTransports
import DriverProtocol
import Foundation
import Testing

/// The suite compiled into the binary is exactly scenarios/.
struct BuiltinSuiteTests {
    @Test func compiledCopyMatchesTheScenariosDirectory() throws {
        let directory = packageRoot.appendingPathComponent("scenarios")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }
            .sorted()
        let stale = "the built-in suite is stale: run scripts/embed-suite.py (scripts/regen-docs.sh runs it)"
        #expect(BuiltinSuite.files.map(\.name) == names, "\(stale)")
        for file in BuiltinSuite.files {
            let onDisk = try String(contentsOf: directory.appendingPathComponent(file.name), encoding: .utf8)
            #expect(file.text == onDisk, "\(file.name): \(stale)")
        }
    }

    /// The dialects the cases are written for, as the embedding script read
    /// them from the files' text, are the parsed cases' own, in the order the
    /// suite first names them; every one but oauth2 is a built-in file.
    @Test func caseDialectsAreTheParsedCasesDialects() throws {
        var seen: [String] = []
        for profile in try BuiltinSuite.scenarios().flatMap(\.profiles) where !seen.contains(profile) { seen.append(profile) }
        #expect(BuiltinSuite.caseDialects == seen, "run scripts/embed-suite.py")
        for name in seen where name != DialectName.oauth2 { #expect(DialectLoader.builtin(name) != nil, "\(name) has no file in dialects/") }
    }

    /// README's counts of the suite are generated, not typed.
    @Test func readmeCountsAreTheSuites() throws {
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let block = "<!-- suite-counts:begin -->\nThe built-in suite: \(try BuiltinSuite.countsText()).\n<!-- suite-counts:end -->"
        #expect(readme.contains(block), "README.md's suite counts are stale: run scripts/regen-docs.sh")
    }

    /// The browser attach client the runner serves is drivers/browser/ as it is.
    @Test func compiledBrowserClientMatchesDriversBrowser() throws {
        let directory = packageRoot.appendingPathComponent("drivers/browser")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".html") || $0.hasSuffix(".js") }
            .sorted()
        let stale = "the compiled browser client is stale: run scripts/embed-suite.py"
        #expect(BrowserClient.files.map(\.name) == names, "\(stale)")
        for file in BrowserClient.files {
            #expect(file.text == (try String(contentsOf: directory.appendingPathComponent(file.name), encoding: .utf8)), "\(file.name): \(stale)")
        }
    }

    /// The runs that wait longest start first: a clock variant's 3.1 s waits
    /// started last would add their length to the suite's wall time.
    @Test func theLongestWaitsStartFirst() throws {
        let cases = try builtInCases()
        let order = ScenarioRunner.launchOrder(cases, jobs: 64)
        #expect(order.sorted() == Array(cases.indices), "every case run starts once")
        let waits = order.map { cases[$0].0.realSeconds }
        #expect(waits == waits.sorted(by: >))
        #expect(cases[order[0]].0.id.hasSuffix(ClockVariant.idSuffix))
        #expect(
            cases[order[0]].0.realSeconds >= 2 * ClockVariant.waitSeconds,
            "two 3.1 s waits at least (9.5-clock's, and its 1 s window for a second refresh): the longest of the suite")
        let firstWithoutWait = try #require(order.firstIndex { cases[$0].0.realSeconds == 0 })
        #expect(order[firstWithoutWait...] == ArraySlice(order[firstWithoutWait...].sorted()), "ties keep the files' order")
        #expect(ScenarioRunner.launchOrder(cases, jobs: 1) == Array(cases.indices), "one at a time: the files' order")
    }

    /// A clock variant waits after the server-side steps that follow its
    /// `advance_clock`: a client renewing on a timer meets the revoked
    /// refresh token during the wait, as 1.7's server-clock run meets it after.
    @Test func aClockVariantWaitsAfterWhatTheCaseSetsUp() throws {
        let variant = try #require(try builtInCases().first { $0.0.id == "1.7-clock" }?.0)
        let kinds = variant.steps.map { step -> String in
            switch step {
            case .login: "login"
            case .revoke: "revoke"
            case .fault: "fault"
            case .sleep: "sleep"
            case .parallel: "parallel"
            case .waitFor: "wait_for"
            default: "other"
            }
        }
        #expect(kinds == ["login", "revoke", "fault", "fault", "sleep", "parallel", "wait_for"])
        #expect(variant.realSeconds == ClockVariant.waitSeconds)
    }

    @Test func builtInCasesParseWithTheirDigests() throws {
        let builtIn = try BuiltinSuite.scenarios()
        let onDisk = try builtInCases().map(\.0)
        #expect(builtIn.count == Set(onDisk.map(\.id)).count)
        for scenario in builtIn {
            #expect(scenario.file.hasPrefix("built-in/"))
            let twin = try #require(onDisk.first { $0.id == scenario.id })
            #expect(scenario.digest == twin.digest, "\(scenario.id)")
        }
        #expect(
            try BuiltinSuite.teethMatrix().faults.count
                == (try TeethMatrix.load(path: packageRoot.appendingPathComponent("scenarios/_teeth.yaml").path)).faults.count)
        #expect(BuiltinSuite.version.wholeMatch(of: /\d+\.\d+\.\d+\+[0-9a-f]{12}/) != nil)
    }

    @Test func filesAddToOrReplaceBuiltInCases() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("suite-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let own = LoaderTests.valid.replacingOccurrences(of: "\"9.1\"", with: "\"100.1\"")
        let replacing = LoaderTests.valid.replacingOccurrences(of: "\"9.1\"", with: "\"1.1\"").replacingOccurrences(
            of: "name: sample", with: "name: mine")
        try own.write(to: dir.appendingPathComponent("own.yaml"), atomically: true, encoding: .utf8)
        try replacing.write(to: dir.appendingPathComponent("replacing.yaml"), atomically: true, encoding: .utf8)

        let builtInCount = try BuiltinSuite.scenarios().count
        let mixed = try SuiteSelection.assemble(paths: [dir.path], builtIn: true)
        #expect(mixed.scenarios.count == builtInCount + 1)
        #expect(mixed.replaced == ["1.1"])
        #expect(mixed.scenarios.filter { $0.id == "1.1" }.map(\.name) == ["mine"])
        #expect(
            mixed.description.contains("1 replaced by your files") && mixed.description.contains("2 case files of your own"), "\(mixed.description)")

        let onlyOwn = try SuiteSelection.assemble(paths: [dir.path], builtIn: false)
        #expect(onlyOwn.scenarios.map(\.id).sorted() == ["1.1", "100.1"])
        #expect(try SuiteSelection.assemble(paths: [], builtIn: true).scenarios.count == builtInCount)
    }
}
