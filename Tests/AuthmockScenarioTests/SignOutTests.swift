import AuthmockDialect
import AuthmockCore
import AuthmockScenario
import AuthmockServer
import DriverProtocol
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Testing

/// A dialect's sign-out endpoint (`sign_out`) ends the login at the server:
/// after it, neither the refresh token nor the access token it named works,
/// on every built-in dialect that has one, each request built from the
/// dialect's description alone, as a client would build it.
struct SignOutTests {
    static let withSignOut = BuiltinDialects.names.filter { DialectLoader.builtin($0)?.description.signOut != nil }

    @Test func theVendorsWithASignOutDeclareIt() {
        #expect(Set(Self.withSignOut) == ["supabase", "keycloak", "auth0", "simplejwt", "cognito"])
    }

    @Test(arguments: withSignOut)
    func aSignedOutLoginIsRefusedAtTheServer(dialect name: String) async throws {
        let dialect = try #require(DialectLoader.builtin(name))
        let description = dialect.description
        let signOut = try #require(description.signOut)
        try await withDialectServed(dialect) { mock, client in
            func send(
                _ method: String, _ path: String, _ match: DialectDescription.Match, _ encoding: DialectDescription.BodyEncoding,
                _ places: [(DialectDescription.TokenLocation?, String)]
            ) async throws -> (status: Int, json: JSONValue?) {
                var fields = match.body.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
                var headers = HTTPFields()
                for (name, value) in match.headers { headers[HTTPField.Name(name)!] = value }
                for (location, token) in places {
                    switch location {
                    case .field(let field)?: fields.append((field, token))
                    case .header(let header, let scheme)?: headers[HTTPField.Name(header)!] = scheme.map { "\($0) \(token)" } ?? token
                    default: break
                    }
                }
                var body: ByteBuffer? = nil
                if !fields.isEmpty {
                    switch encoding {
                    case .json:
                        headers[.contentType] = "application/json"
                        body = ByteBuffer(data: try JSONEncoder().encode(JSONValue.nested(fields)))
                    case .form:
                        headers[.contentType] = "application/x-www-form-urlencoded"
                        let pairs = fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }
                        body = ByteBuffer(string: pairs.joined(separator: "&"))
                    }
                }
                let query = match.query.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "&")
                let response = try await client.execute(
                    uri: query.isEmpty ? path : "\(path)?\(query)", method: HTTPRequest.Method(method)!, headers: headers, body: body)
                return (Int(response.status.code), try? JSONDecoder().decode(JSONValue.self, from: Data(buffer: response.body)))
            }
            func value(_ placeholder: Placeholder, _ json: JSONValue?) -> String? {
                guard let path = description.tokens.body.path(to: placeholder), case .string(let text)? = json?.value(at: path) else { return nil }
                return text
            }
            let signIn = description.signIn
            // A backend that names its app client (`client_id`) is told it in each sign-in and refresh.
            let naming: [(DialectDescription.TokenLocation?, String)] = description.clientID.map { [(.field($0), "demo")] } ?? []
            let signedIn = try await send(
                signIn.method, signIn.path, signIn.match, signIn.encoding,
                [(.field(signIn.username), signIn.defaultUser ?? "alice"), (.field(signIn.password), "wonderland")] + naming)
            #expect(signedIn.status == description.tokens.status, "\(name): sign-in answered \(signedIn.status)")
            let access = try #require(value(.accessToken, signedIn.json), "\(name): no access token in \(String(describing: signedIn.json))")
            let refresh = try #require(value(.refreshToken, signedIn.json), "\(name): no refresh token")
            #expect(try await client.execute(uri: "/api/me", method: .get, headers: [.authorization: "Bearer \(access)"]).status == .ok)

            let out = try await send(
                signOut.method, signOut.path, signOut.match, signOut.encoding, [(signOut.refreshToken, refresh), (signOut.accessToken, access)])
            #expect(out.status == signOut.status, "\(name): sign-out answered \(out.status)")

            let endpoint = description.refresh
            let refreshed = try await send(
                endpoint.method, endpoint.path, endpoint.match, endpoint.encoding,
                [(endpoint.refreshToken, refresh), (endpoint.accessToken, access)] + naming)
            let refused = description.errors.answers["refresh_token_revoked"] ?? description.errors.answers["refresh_refused"]
            #expect(refreshed.status == refused?.status, "\(name): a signed-out refresh token got \(refreshed.status)")
            let api = try await client.execute(uri: "/api/me", method: .get, headers: [.authorization: "Bearer \(access)"])
            #expect(api.status.code >= 400, "\(name): a signed-out access token got \(api.status.code)")
            let journal = try await mock.control.journal().entries
            #expect(journal.contains { $0.kind == .revoke && $0.status == signOut.status })
        }
    }

    /// 9.2 runs on every dialect with a sign-out: the reference client
    /// passes it there, and with `sign-out-locally-only` it does not, for
    /// the cause the cause matrix names.
    @Test func theSignOutCaseRunsWhereverThereIsASignOut() async throws {
        let driver = try referenceDriver()
        let matrix = try TeethMatrix.load(path: TeethMatrixTests.matrixPath)
        let expected = matrix.faults.first { $0.name == "sign-out-locally-only" }?.cells.expectedCause("9.2")
        for name in BuiltinDialects.names {
            let dialect = try #require(DialectLoader.builtin(name))
            let runs = try DeclaredDialectRunTests.cases(for: dialect).filter { $0.0.id == "9.2" }
            #expect(runs.count == (Self.withSignOut.contains(name) ? 1 : 0), "\(name)")
            guard !runs.isEmpty else { continue }
            let clean = await ScenarioRunner.run(runs, options: DeclaredDialectRunTests.options(driver, dialect))
            #expect(clean.map(\.verdict) == [.pass], "\(name): \(clean.map { "\($0.verdict.rawValue) \($0.failedFindings.map(\.message))" })")
            let broken = await ScenarioRunner.run(runs, options: DeclaredDialectRunTests.options("\(driver) --fault sign-out-locally-only", dialect))
            #expect(broken.map(\.verdict) == [.nonStrict], "\(name)")
            #expect(broken.first?.causes?.map(\.id) == expected.map { [$0] }, "\(name): \(String(describing: broken.first?.causes))")
        }
    }
}
