import AuthmockDialect
public import AuthmockScenario
import AuthmockServer
import DriverProtocol
import Foundation
import Synchronization

/// One case of the suite in one dialect: what a parameterized test runs
/// once per argument (`@Test(arguments: try AuthmockSuite.builtInCases(for: client))`).
public struct AuthmockCase: Sendable, Identifiable, CustomStringConvertible {
    public let scenario: Scenario
    /// The dialect its server speaks: a built-in dialect, or a declared dialect's name.
    public let profile: String
    /// The declared dialect's file, when `profile` names one.
    let dialect: LoadedDialect?

    /// `1.1 [oauth2]`: what reports and `expected-failures` files call a case run.
    public var id: String { "\(scenario.id) [\(profile)]" }
    /// `1.1 [oauth2] ten concurrent requests hit an expired token`
    public var description: String { "\(id) \(scenario.name)" }

    /// Runs the case against `client`: a fresh mock, a fresh client, the
    /// steps, then the verdict with its findings and evidence. The client
    /// runs in this process; its calls reach the mock over HTTP on 127.0.0.1.
    public func run(against client: ClientUnderTest) async -> CaseResult {
        await AuthmockSuite.run([self], against: client)[0]
    }

    /// What a failed test says: the verdict, the reason, each broken
    /// expectation with its evidence (the requests the mock saw), and the
    /// cause the suite names; empty for a PASS. A cause already shown with
    /// its evidence for another case in this test process is named once
    /// more, with that case, and this case's findings without evidence: 14
    /// cases of one missing single flight print its evidence once.
    public static func failureMessage(_ result: CaseResult) -> String {
        let causes = (result.causes ?? []).map(\.id)
        let shownFor =
            causes.isEmpty
            ? nil
            : Self.causesShown.withLock { shown -> String? in
                if let first = causes.compactMap({ shown[$0] }).first, causes.allSatisfy({ shown[$0] != nil }) { return first }
                for cause in causes where shown[cause] == nil { shown[cause] = result.label }
                return nil
            }
        guard let shownFor, result.verdict == .fail else { return Reports.details(result).trimmingCharacters(in: .newlines) }
        var out = "\(result.verdict.rawValue) \(result.label) \(result.name)\n"
        out += "  cause: \((result.causes ?? []).map(\.title).joined(separator: "; ")) (its evidence: \(shownFor), above)\n"
        for finding in result.failedFindings { out += "  x \(finding.expectation): \(finding.message)\n" }
        return out.trimmingCharacters(in: .newlines)
    }

    /// Cause id -> the case whose message showed it with evidence, in this process.
    static let causesShown = Mutex([String: String]())
}

/// The cases a Swift client can run, and running many at once.
public enum AuthmockSuite {
    /// The built-in cases for `client`: every case of each dialect it
    /// speaks, less those it cannot run (a capability it does not declare);
    /// `ids`: only these (`1.1`, `3.*`). Its dialects are the built-in
    /// dialects and the built-in dialect files (`authmock dialects` lists them).
    public static func builtInCases(for client: ClientUnderTest, ids: [String] = []) throws -> [AuthmockCase] {
        try cases(for: client, files: [], builtIn: true, ids: ids)
    }

    /// The cases of `files` (case files, or directories of them) with the
    /// built-in ones unless `builtIn` is false (a case file with a built-in
    /// id replaces that case); `dialectFiles`: the files of dialects the
    /// client names that are not built in (docs/dialects.md). A broken
    /// file throws its file:line:column.
    public static func cases(
        for client: ClientUnderTest, files: [String] = [], dialectFiles: [String] = [], builtIn: Bool = true, ids: [String] = []
    ) throws -> [AuthmockCase] {
        let suite = try SuiteSelection.assemble(paths: files, builtIn: builtIn)
        let profiles = client.identity.profiles
        var selection = CaseSelection(ids: ids, profiles: profiles, dialects: CaseSelection.builtinDialects(named: profiles))
        for file in dialectFiles {
            let loaded = try DialectLoader.load(file: file)
            selection.dialects[loaded.description.name] = loaded
        }
        if let name = profiles.first(where: { !BuiltinSuite.caseDialects.contains($0) && selection.dialects[$0] == nil }) {
            throw SuiteError(
                "the client speaks '\(name)', which is neither a built-in dialect (\(Dialects.names.joined(separator: ", "))) nor declared in dialectFiles"
            )
        }
        let info = client.driverInfo
        return selection.runs(suite.scenarios).filter { info.cannotRun($0.0, profile: $0.1) == nil }.map { scenario, profile in
            AuthmockCase(scenario: scenario, profile: profile, dialect: selection.dialects[profile])
        }
    }

    /// Runs `cases` against `client`, `jobs` at a time (a case mostly
    /// waits: its quiet periods, client clocks), each on its own mock;
    /// the results in the order given.
    public static func run(_ cases: [AuthmockCase], against client: ClientUnderTest, jobs: Int = RunOptions.defaultJobs) async -> [CaseResult] {
        var options = RunOptions(transport: InProcessTransport(client: client), jobs: jobs)
        options.driverInfo = client.driverInfo
        for authCase in cases { if let dialect = authCase.dialect { options.dialects[authCase.profile] = dialect } }
        return await ScenarioRunner.run(cases.map { ($0.scenario, $0.profile) }, options: options)
    }
}

/// A client or a selection the suite cannot run.
public struct SuiteError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
