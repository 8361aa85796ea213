import ArgumentParser
import AuthmockScenario
import Foundation

/// Exit statuses of `authmock run` and `authmock validate`.
enum RunExit {
    /// Nothing failed or errored.
    static let ok: Int32 = 0
    /// A case FAILed or ERRORed.
    static let failures: Int32 = 1
    /// Bad usage or an invalid scenario file.
    static let usage: Int32 = 2
}

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Replay scenarios against a client driver and judge what the client did.",
        discussion: """
            Each case gets a fresh in-process server and a fresh driver process. Exit status: 0 when nothing \
            FAILed or ERRORed, 1 otherwise, 2 for bad usage or invalid scenario files.
            """
    )

    @Argument(help: "Case files or directories to add to the built-in suite (a case with a built-in id replaces it).") var paths: [String] = []
    @Flag(inversion: .prefixedNo, help: "Run the built-in suite (compiled into authmock) beside the paths.") var builtIn = true
    @Option(help: "Shell command that starts the driver, e.g. \"python3 drivers/python-authlib/driver.py\".") var driver: String
    @Option(name: .customLong("case"), help: "Only cases whose id matches this glob (e.g. 1.* or 2.1); repeatable.") var cases: [String] = []
    @Option(help: "Only these profiles; repeatable.") var profile: [String] = []
    @Option(help: "Only cases of this level: must or should.") var level: String?
    @Option(help: "Cases run at once (default: the number of cores).") var jobs: Int = ProcessInfo.processInfo.activeProcessorCount
    @Option(name: .customLong("expected-failures"), help: "YAML file of cases the driver is known to fail, with reasons (reported as SKIP).") var expectedFailures: String?
    @Option(help: "Write a JUnit XML report here.") var junit: String?
    @Option(help: "Write a JSON report here.") var json: String?
    @Flag(help: "Print the evidence of passing cases too.") var verbose = false

    func run() async throws {
        let suite: SuiteSelection
        do {
            suite = try SuiteSelection.assemble(paths: paths, builtIn: builtIn)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(RunExit.usage)
        }
        guard level == nil || level == "must" || level == "should" else { throw ValidationError("--level takes must or should") }
        var known: [String: String] = [:]
        if let expectedFailures {
            do {
                known = try ExpectedFailures.load(path: expectedFailures)
            } catch {
                FileHandle.standardError.write(Data("\(error)\n".utf8))
                throw ExitCode(RunExit.usage)
            }
        }
        let scenarios = suite.scenarios
        let selected = scenarios.filter { scenario in
            (cases.isEmpty || cases.contains { glob($0, matches: scenario.id) }) && (level == nil || scenario.level.rawValue == level)
        }.flatMap { scenario in
            scenario.profiles.filter { profile.isEmpty || profile.contains($0) }.map { (scenario, $0) }
        }
        guard !selected.isEmpty else {
            FileHandle.standardError.write(Data("no case matches the filters (\(scenarios.count) scenarios read)\n".utf8))
            throw ExitCode(RunExit.usage)
        }
        print("authmock run: \(selected.count) cases from the \(suite.description), driver: \(driver)")
        let started = ContinuousClock.now
        let verbose = self.verbose
        let results = await ScenarioRunner.run(
            selected, options: RunOptions(driver: driver, jobs: jobs, expectedFailures: known)
        ) { result in
            print(Reports.progressLine(result))
            if verbose { for finding in result.findings { print("           \(finding.passed ? "ok" : "x ") \(finding.expectation): \(finding.message)") } }
        }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        for result in results { print(Reports.details(result), terminator: "") }
        let suiteVersion = suite.includesBuiltIn ? BuiltinSuite.version : nil
        print(Reports.summary(results, seconds: seconds, suite: suiteVersion), terminator: "")
        if let junit { try Reports.junit(results, seconds: seconds, suite: suiteVersion).write(toFile: junit, atomically: true, encoding: .utf8) }
        if let json {
            try Reports.json(results, seconds: seconds, driver: driver, suite: suiteVersion).write(toFile: json, atomically: true, encoding: .utf8)
        }
        if results.contains(where: { $0.verdict == .fail || $0.verdict == .error }) { throw ExitCode(RunExit.failures) }
    }
}

/// `*` and `?` globs for case ids.
func glob(_ pattern: String, matches text: String) -> Bool {
    let p = Array(pattern), t = Array(text)
    func match(_ i: Int, _ j: Int) -> Bool {
        if i == p.count { return j == t.count }
        if p[i] == "*" { return (j...t.count).contains { match(i + 1, $0) } }
        guard j < t.count, p[i] == "?" || p[i] == t[j] else { return false }
        return match(i + 1, j + 1)
    }
    return match(0, 0)
}
