extension StringProtocol {
    /// Without leading and trailing blanks: spaces, tabs and other horizontal white space,
    /// not line breaks (what Foundation's `CharacterSet.whitespaces` trims, without Foundation).
    package func trimmingBlanks() -> String {
        func blank(_ c: Character) -> Bool { c.isWhitespace && !c.isNewline }
        guard let first = firstIndex(where: { !blank($0) }), let last = lastIndex(where: { !blank($0) }) else { return "" }
        return String(self[first...last])
    }
}
