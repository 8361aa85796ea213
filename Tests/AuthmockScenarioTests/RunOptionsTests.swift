import AuthmockScenario
import AuthmockTransports
import Foundation
import Testing

/// The runner links no database driver: a case server's state opens through
/// `RunOptions.openState`, which the CLI fills with its own. Without one,
/// a database state is a clear error, never a silent in-memory run.
@Suite struct RunOptionsTests {
    @Test func withoutAnOpenerOnlyMemoryStateOpens() async throws {
        let parsed = try scenario(RunnerTests.simple)
        var options = RunOptions(driver: try referenceDriver(), jobs: 1)
        options.caseServerState = .sqlite
        let refused = await ScenarioRunner.runCase(parsed, profile: "oauth2", options: options)
        #expect(refused.verdict == .error)
        #expect(refused.reason?.contains("no database drivers") == true, "\(refused.reason ?? "")")

        options.caseServerState = .memory
        let served = await ScenarioRunner.runCase(parsed, profile: "oauth2", options: options)
        #expect(served.verdict == .pass, "\(Reports.details(served))")
    }
}
