import DriverProtocol
import Foundation
import NIOCore
import Testing

@testable import AuthmockServer

/// A success answer written from its compiled bytes says what the template
/// rendered as a tree says, for every shape a dialect file can write.
struct CompiledTemplateTests {
    static let templates: [String] = [
        #"{"success": true, "data": {"accessToken": "{access_token}", "refreshToken": "{refresh_token}", "accessTokenExpiresIn": "{expires_in}"}, "error": null}"#,
        #"{"ok": true, "session": {"access": "{access_token}", "ttl": "{expires_in:string}", "user": "{user}", "note": "for {user}, \"quoted\" \\ here"}}"#,
        #"{"list": ["{access_token}", 1, 2.5, false, null, {"nested": ["{token_type} {access_token}"]}], "at": "{expires_at}"}"#,
        #""{access_token}""#,
    ]

    static let strings = ["plain", "with \"quotes\" and \\ backslash", "line\nbreak\ttab\u{01}control", "ünïcödé ✓ /slash"]

    @Test(arguments: templates)
    func compiledBytesSayWhatTheTreeSays(_ text: String) throws {
        let template = try Template.parse(try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)), allowed: Placeholder.success)
        let compiled = CompiledTemplate(template)
        for string in Self.strings {
            let values: (Placeholder) -> JSONValue = { placeholder in
                switch placeholder {
                case .expiresIn, .expiresAt: .integer(300)
                default: .string(string)
                }
            }
            let bytes = try #require(compiled.render(values), "\(text)")
            let fast = try JSONSerialization.jsonObject(with: Data(bytes.readableBytesView), options: .fragmentsAllowed)
            let tree = try JSONSerialization.jsonObject(
                with: Data(JSONResponse.bytes(template.render(values)).readableBytesView), options: .fragmentsAllowed)
            #expect(NSDictionary(dictionary: ["v": fast]).isEqual(to: ["v": tree]), "\(text) with \(string.debugDescription)")
        }
    }

    /// A member whose placeholder has no value is left out: the tree does that.
    @Test func aMissingMemberFallsBackToTheTree() throws {
        let template = try Template.parse(
            try JSONDecoder().decode(JSONValue.self, from: Data(Self.templates[0].utf8)), allowed: Placeholder.success)
        #expect(CompiledTemplate(template).render { $0 == .refreshToken ? .null : .string("x") } == nil)
    }
}
