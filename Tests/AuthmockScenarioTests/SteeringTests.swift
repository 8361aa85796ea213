import AuthmockControlClient
import AuthmockScenario
import Testing

/// The runner's steps steer a case's server through `MockSteering`
/// (`RunOptions.steering`): over the control API, with a `ControlClient` at
/// the case server's address as a runner in another process would, they
/// give the verdicts and causes they give in process.
@Suite struct SteeringTests {
    /// Faults, `clear_faults`, the clock, `wait_for` (arrivals and answered
    /// requests) and a cancel: 3.5, 9.5, 2.3.2 and 4.2 between them.
    static let runs: Set<String> = ["3.5 [oauth2]", "9.5 [oauth2]", "2.3.2 [oauth2]", "4.2 [header-rotation]"]

    @Test(arguments: [nil, "retry-lost-refresh-later"])
    func theStepsSteerOverTheControlAPIAsInProcess(_ fault: String?) async throws {
        let cases = try builtInCases().filter { Self.runs.contains("\($0.0.id) [\($0.1)]") }
        #expect(cases.count == Self.runs.count)
        let driver = try referenceDriver() + (fault.map { " --fault \($0)" } ?? "")
        var overHTTP = RunOptions(driver: driver)
        overHTTP.steering = { ControlClient(baseURL: $0.baseURL, adminToken: $0.options.adminToken) }
        let inProcess = await ScenarioRunner.run(cases, options: RunOptions(driver: driver))
        let remote = await ScenarioRunner.run(cases, options: overHTTP)
        func outcome(_ results: [CaseResult]) -> [String: String] {
            Dictionary(
                uniqueKeysWithValues: results.map { result in
                    (result.label, "\(result.verdict.rawValue) \((result.causes ?? []).map(\.id).joined(separator: ","))")
                })
        }
        #expect(outcome(remote) == outcome(inProcess))
        for result in remote {
            let expected = fault != nil && result.id == "3.5" ? "NON-STRICT lost-refresh-retried-late" : "PASS "
            #expect(outcome([result])[result.label] == expected, "\(result.label): \(result.reason ?? "")\(Reports.details(result))")
        }
    }
}
