import AuthmockDialect
import AuthmockScenario
import AuthmockServer
import DriverProtocol
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// `other_content_types`: what a backend does with a body in a type its
/// endpoint does not read. SimpleJWT (Django REST framework) refuses it with
/// 415; a dialect that does not say reads it as its encoding, as GoTrue does.
struct OtherContentTypesTests {
    static let signIn = #"{"username": "alice", "password": "wonderland"}"#

    @Test func simpleJWTRefusesABodyNoParserTakes() async throws {
        let dialect = try #require(DialectLoader.builtin("simplejwt"))
        #expect(dialect.description.otherContentTypes == .refuse)
        try await withDialectServed(dialect) { _, client in
            func post(_ path: String, _ type: String?, _ body: String) async throws -> (Int, [String: Any]) {
                var headers = HTTPFields()
                if let type { headers[.contentType] = type }
                let response = try await client.execute(uri: path, method: .post, headers: headers, body: ByteBuffer(string: body))
                return (Int(response.status.code), (try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]) ?? [:])
            }
            let json = try await post("/api/token/", "application/json; charset=utf-8", Self.signIn)
            #expect(json.0 == 200)
            #expect(try await post("/api/token/", "application/x-www-form-urlencoded", "username=alice&password=wonderland").0 == 200)
            for type in ["text/plain", nil] {
                let (status, body) = try await post("/api/token/", type, Self.signIn)
                #expect(status == 415, "\(type ?? "no Content-Type"): \(body)")
                #expect(body["detail"] as? String == "Unsupported media type in request.", "\(body)")
            }
            let refresh = try #require(json.1["refresh"] as? String)
            #expect(try await post("/api/token/refresh/", "text/plain", #"{"refresh": "\#(refresh)"}"#).0 == 415)
            #expect(try await post("/api/token/blacklist/", "text/plain", #"{"refresh": "\#(refresh)"}"#).0 == 415)
            // The refusal used nothing up: the token still refreshes.
            #expect(try await post("/api/token/refresh/", "application/json", #"{"refresh": "\#(refresh)"}"#).0 == 200)
        }
    }

    @Test func aDialectThatDoesNotSayReadsTheBodyAsItsEncoding() async throws {
        let file = try #require(BuiltinDialects.file("simplejwt"))
        let reading = try DialectLoader.parse(
            file.replacingOccurrences(of: "other_content_types: refuse", with: "").replacingOccurrences(
                of: "dialect: simplejwt", with: "dialect: reading"),
            file: "reading.yaml")
        #expect(reading.description.otherContentTypes == nil)
        try await withDialectServed(reading) { _, client in
            let response = try await client.execute(
                uri: "/api/token/", method: .post, headers: [.contentType: "text/plain"], body: ByteBuffer(string: Self.signIn))
            #expect(response.status == .ok)
        }
    }

    @Test func anUnknownPolicyIsRefusedWithWhereAndWhatIsExpected() throws {
        let file = try #require(BuiltinDialects.file("simplejwt"))
        #expect(file.contains("other_content_types: refuse"))
        do {
            _ = try DialectLoader.parse(
                file.replacingOccurrences(of: "other_content_types: refuse", with: "other_content_types: maybe"), file: "odd.yaml")
            Issue.record("other_content_types: maybe was taken")
        } catch {
            #expect("\(error)".contains("odd.yaml:") && "\(error)".contains("read") && "\(error)".contains("refuse"), "\(error)")
        }
    }
}
