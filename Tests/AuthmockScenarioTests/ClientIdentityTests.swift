import AuthmockDialect
import AuthmockCore
import AuthmockScenario
import AuthmockServer
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// A dialect's `client_id`: the backend names its app client in every
/// sign-in and refresh (Cognito's `ClientId`), checks it first, issues
/// tokens to it, and refuses another client's refresh token.
struct ClientIdentityTests {
    static let pool = Directory(clients: [Directory.defaultClient, Client(id: "other-app", secret: nil)])

    @Test func cognitoChecksTheAppClientFirstAndIssuesToIt() async throws {
        let dialect = try #require(DialectLoader.builtin("cognito"))
        #expect(dialect.description.clientID == "ClientId")
        try await withDialectServed(dialect, directory: Self.pool) { _, client in
            func initiate(_ flow: String, _ clientID: String?, _ parameters: [String: String]) async throws -> (Int, [String: Any]) {
                var request: [String: Any] = ["AuthFlow": flow, "AuthParameters": parameters]
                if let clientID { request["ClientId"] = clientID }
                let response = try await client.execute(
                    uri: "/", method: .post,
                    headers: [
                        HTTPField.Name("X-Amz-Target")!: "AWSCognitoIdentityProviderService.InitiateAuth", .contentType: "application/x-amz-json-1.1",
                    ],
                    body: ByteBuffer(data: try JSONSerialization.data(withJSONObject: request)))
                return (Int(response.status.code), (try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]) ?? [:])
            }
            func claims(_ token: String) throws -> [String: Any] {
                var part = String(token.split(separator: ".")[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
                while part.count % 4 != 0 { part += "=" }
                let data = try #require(Data(base64Encoded: part))
                return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            }
            let alice = ["USERNAME": "alice", "PASSWORD": "wonderland"]
            let unknown = try await initiate("USER_PASSWORD_AUTH", "nobody", alice)
            #expect(unknown.0 == 400 && unknown.1["__type"] as? String == "ResourceNotFoundException", "\(unknown)")
            // Checked first: a wrong password with an unknown client is still the client's refusal.
            let both = try await initiate("USER_PASSWORD_AUTH", "nobody", ["USERNAME": "alice", "PASSWORD": "nope"])
            #expect(both.1["__type"] as? String == "ResourceNotFoundException", "\(both)")
            let missing = try await initiate("USER_PASSWORD_AUTH", nil, alice)
            #expect(missing.0 == 400 && missing.1["__type"] as? String == "InvalidParameterException", "\(missing)")

            let mine = try await initiate("USER_PASSWORD_AUTH", "other-app", alice)
            let result = try #require(mine.1["AuthenticationResult"] as? [String: Any], "\(mine)")
            let access = try #require(result["AccessToken"] as? String)
            #expect(try claims(access)["client_id"] as? String == "other-app")
            let refresh = try #require(result["RefreshToken"] as? String)
            let stranger = try await initiate("REFRESH_TOKEN_AUTH", "demo", ["REFRESH_TOKEN": refresh])
            #expect(stranger.0 == 400 && stranger.1["__type"] as? String == "NotAuthorizedException", "another client's refresh token: \(stranger)")
            let nobody = try await initiate("REFRESH_TOKEN_AUTH", "nobody", ["REFRESH_TOKEN": refresh])
            #expect(nobody.1["__type"] as? String == "ResourceNotFoundException", "\(nobody)")
            let own = try await initiate("REFRESH_TOKEN_AUTH", "other-app", ["REFRESH_TOKEN": refresh])
            #expect(own.0 == 200, "its own client's refresh: \(own)")
        }
    }

    @Test func aFileThatNamesTheClientFieldMustSayHowAnUnknownOneIsRefused() throws {
        let file = try #require(BuiltinDialects.file("cognito"))
        let start = try #require(file.range(of: "    client_unknown:"))
        let end = try #require(file.range(of: "    wrong_credentials:"))
        var text = file
        text.removeSubrange(start.lowerBound..<end.lowerBound)
        text = text.replacingOccurrences(of: "dialect: cognito", with: "dialect: pool")
        do {
            _ = try DialectLoader.parse(text, file: "pool.yaml")
            Issue.record("a client_id without a client_unknown answer was taken")
        } catch {
            #expect("\(error)".contains("pool.yaml:") && "\(error)".contains("'client_unknown'"), "\(error)")
        }
        // Without `client_id` the answer is not needed.
        _ = try DialectLoader.parse(text.replacingOccurrences(of: "client_id: ClientId\n", with: ""), file: "pool.yaml")
    }
}
