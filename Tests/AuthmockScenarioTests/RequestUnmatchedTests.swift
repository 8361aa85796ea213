import AuthmockDialect
import AuthmockScenario
import AuthmockServer
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// A request at a dialect's sign-in or refresh path and method that its
/// `match` fits no endpoint of (another grant type, an `AuthFlow` the
/// backend has no flow for) is the `request_unmatched` situation: Cognito's
/// file answers it as AWS does (400 InvalidParameterException, what moto's
/// Cognito answers in docs/fidelity.md), a file that does not name it as its
/// unknown route.
struct RequestUnmatchedTests {
    @Test func cognitoRefusesAnAuthFlowItHasNoFlowFor() async throws {
        let dialect = try #require(DialectLoader.builtin("cognito"))
        try await withDialectServed(dialect) { mock, client in
            let body = #"{"AuthFlow": "CUSTOM_AUTH", "ClientId": "demo", "AuthParameters": {"USERNAME": "alice"}}"#
            let response = try await client.execute(
                uri: "/", method: .post,
                headers: [
                    HTTPField.Name("X-Amz-Target")!: "AWSCognitoIdentityProviderService.InitiateAuth", .contentType: "application/x-amz-json-1.1",
                ],
                body: ByteBuffer(string: body))
            #expect(response.status.code == 400)
            #expect(response.headers[HTTPField.Name("x-amzn-ErrorType")!] == "InvalidParameterException:")
            let answer = try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]
            #expect(answer?["__type"] as? String == "InvalidParameterException", "\(String(buffer: response.body))")
            #expect(try await mock.control.journal().entries.last?.situation == "request_unmatched")
        }
    }

    @Test func aFileThatDoesNotNameItAnswersItAsAnUnknownRoute() async throws {
        let dialect = try #require(DialectLoader.builtin("supabase"))
        #expect(dialect.description.errors.answers["request_unmatched"] == nil)
        try await withDialectServed(dialect) { mock, client in
            let response = try await client.execute(
                uri: "/auth/v1/token?grant_type=magic", method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(string: "{}"))
            #expect(response.status.code == 404, "\(String(buffer: response.body))")
            #expect(try await mock.control.journal().entries.last?.situation == "request_unmatched")
        }
    }
}
