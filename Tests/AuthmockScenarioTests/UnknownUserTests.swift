import AuthmockDialect
import AuthmockCore
import AuthmockScenario
import AuthmockServer
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// A sign-in naming no user: by default the wrong-password answer (Cognito's
/// `PreventUserExistenceErrors: ENABLED`, the console's default); under
/// `unknown_user: reveal` the dialect's `user_unknown` answer (LEGACY, the
/// default of app clients made through the API, as moto answers in
/// docs/fidelity.md), and the wrong-password answer where a dialect has none.
struct UnknownUserTests {
    static func cognitoSignIn(_ client: any TestClientProtocol, user: String) async throws -> (String?, String?) {
        let body = #"{"AuthFlow": "USER_PASSWORD_AUTH", "ClientId": "demo", "AuthParameters": {"USERNAME": "\#(user)", "PASSWORD": "nope"}}"#
        let response = try await client.execute(
            uri: "/", method: .post,
            headers: [HTTPField.Name("X-Amz-Target")!: "AWSCognitoIdentityProviderService.InitiateAuth", .contentType: "application/x-amz-json-1.1"],
            body: ByteBuffer(string: body))
        #expect(response.status.code == 400)
        let answer = try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]
        return (answer?["__type"] as? String, response.headers[HTTPField.Name("x-amzn-ErrorType")!])
    }

    @Test func cognitoHidesAnUnknownUserByDefault() async throws {
        let dialect = try #require(DialectLoader.builtin("cognito"))
        try await withDialectServed(dialect) { mock, client in
            let (type, header) = try await Self.cognitoSignIn(client, user: "nobody")
            #expect(type == "NotAuthorizedException" && header == "NotAuthorizedException:")
            #expect(try await mock.control.journal().entries.last?.situation == "wrong_credentials")
        }
    }

    @Test func cognitoRevealsAnUnknownUserWhenAsked() async throws {
        let dialect = try #require(DialectLoader.builtin("cognito"))
        try await withDialectServed(dialect, configure: { $0.dialectOptions.unknownUser = .reveal }) { mock, client in
            let (type, header) = try await Self.cognitoSignIn(client, user: "nobody")
            #expect(type == "UserNotFoundException" && header == "UserNotFoundException:")
            #expect(try await mock.control.journal().entries.last?.situation == "user_unknown")
            // A user who exists, with a wrong password, is still told only that.
            let (known, _) = try await Self.cognitoSignIn(client, user: "alice")
            #expect(known == "NotAuthorizedException")
        }
    }

    @Test func aDialectWithoutTheAnswerSaysWrongCredentials() async throws {
        let dialect = try #require(DialectLoader.builtin("supabase"))
        #expect(dialect.description.errors.answers["user_unknown"] == nil)
        try await withDialectServed(dialect, configure: { $0.dialectOptions.unknownUser = .reveal }) { mock, client in
            let response = try await client.execute(
                uri: "/auth/v1/token?grant_type=password", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: #"{"email": "nobody@example.com", "password": "nope"}"#))
            #expect(response.status.code == 400, "\(String(buffer: response.body))")
            #expect(String(buffer: response.body).contains("invalid_credentials"), "\(String(buffer: response.body))")
            #expect(try await mock.control.journal().entries.last?.situation == "user_unknown")
        }
    }

    @Test func theSettingIsReadWhereEverySettingIs() throws {
        let setting = try #require(ServerSetting.all.first { $0.key == "unknown_user" })
        #expect(setting.flag == "--unknown-user" && setting.inScenarios && setting.backendTrait)
        #expect(throws: SettingsError.self) { try setting.parse("legacy", from: "--unknown-user") }
    }
}
