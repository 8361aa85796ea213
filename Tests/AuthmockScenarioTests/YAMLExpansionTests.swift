import AuthmockServer
import Testing

@testable import AuthmockFileFormat
@testable import AuthmockScenario

/// The text-level bound on alias expansion (YAMLExpansion): it refuses the
/// nested shapes whatever the anchor's node looks like, and takes every
/// file the project ships, whose anchors repeat small answers.
struct YAMLExpansionTests {
    static func nested(_ levels: Int, fan: Int, block: Bool) -> String {
        var text = block ? "l0: &l0\n  a: 1\n  b: 2\n" : "l0: &l0 {a: 1, b: 2}\n"
        for level in 1...levels {
            let aliases = (0..<fan).map { _ in "*l\(level - 1)" }
            text +=
                block
                ? "l\(level): &l\(level)\n" + aliases.map { "  - \($0)\n" }.joined() : "l\(level): &l\(level) [\(aliases.joined(separator: ", "))]\n"
        }
        return text
    }

    @Test(arguments: [false, true])
    func nestedAliasesPastTheBoundAreFoundInFlowAndBlockStyle(block: Bool) {
        #expect(YAMLExpansion.lineBeyond(100_000, in: Self.nested(6, fan: 10, block: block)) != nil)
        #expect(YAMLExpansion.lineBeyond(100_000, in: Self.nested(3, fan: 10, block: block)) == nil, "a thousand values is a file")
    }

    @Test func quotedTextAndCommentsAreNotAliases() {
        let text = "a: &a {x: 1}\nb: \"*a *a *a\" # *a *a\nc: '&a *a'\n"
        #expect(YAMLExpansion.lineBeyond(3, in: text) == nil)
        #expect(YAMLExpansion.lineBeyond(3, in: text + "d: [*a, *a, *a, *a]\n") == 4)
    }

    @Test func theShippedDialectsAreWellWithinIt() throws {
        for name in BuiltinDialects.names {
            #expect(YAMLExpansion.lineBeyond(1_000, in: try #require(BuiltinDialects.file(name))) == nil, "\(name)")
        }
    }
}
