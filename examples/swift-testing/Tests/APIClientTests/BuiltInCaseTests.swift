import AuthmockTesting
import Testing

/// authmock's built-in suite, one test per case the client can run: each
/// starts its own mock, a fresh client, plays the case, and judges what the
/// mock saw. A failure's message is the case's findings and evidence.
@Suite struct BuiltInCaseTests {
    @Test(arguments: try AuthmockSuite.builtInCases(for: .apiClient()))
    func builtInCase(_ authCase: AuthmockCase) async throws {
        try await authCase.check(.apiClient())
    }

    /// The suite has teeth: with its single flight broken, the client fails
    /// 1.1 (ten calls meet one expired token), and the message shows why.
    @Test func brokenSingleFlightFailsConcurrent401s() async throws {
        let broken = ClientUnderTest.apiClient(sharesRenewal: false)
        let concurrent = try #require(try AuthmockSuite.builtInCases(for: broken, ids: ["1.1"]).first)
        let result = await concurrent.run(against: broken)
        #expect(result.verdict == .fail)
        let message = AuthmockCase.failureMessage(result)
        #expect(message.contains("superfluous_refreshes"), "\(message)")
        #expect(message.contains("POST /oauth/token [refresh]"), "\(message)")
    }
}
