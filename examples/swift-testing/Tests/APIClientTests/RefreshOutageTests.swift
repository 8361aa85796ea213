import APIClient
import AuthmockTesting
import Foundation
import Testing

/// A test of the client's own against a mock it steers by hand: the token
/// endpoint is down (503) when the token expires.
@Suite struct RefreshOutageTests {
    @Test func aTokenEndpointAnswering503KeepsTheSession() async throws {
        try await MockServer.with(dialect: "oauth2", configure: { $0.tokens.accessTTL = 300 }) { mock in
            let control = mock.control
            let client = APIClient(
                baseURL: try #require(URL(string: mock.baseURL)), clientID: control.client.id, clientSecret: control.client.secret ?? "")
            try await client.signIn(username: "alice", password: "wonderland")
            #expect(try await client.send(APIRequest(path: "/api/items")).status == 200)

            // An hour later the token has expired, and the next refresh answers 503.
            _ = try await control.advanceClock(seconds: 3600)
            _ = control.addFault(FaultRule(match: .init(kinds: [.refresh]), times: 1, action: .respond(status: 503, headers: [:], body: nil)))
            await #expect(throws: APIError.refreshUnavailable(status: 503, reason: "the token endpoint answered 503")) {
                try await client.send(APIRequest(path: "/api/items"))
            }

            // The endpoint is back: the session was kept, so the next call renews and succeeds.
            #expect(try await client.send(APIRequest(path: "/api/items")).status == 200)
            let refreshes = try await control.journal().entries.filter { $0.kind == .refresh }.map(\.status)
            #expect(refreshes == [503, 200])
        }
    }
}
