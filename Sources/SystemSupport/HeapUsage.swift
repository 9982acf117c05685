import CShims

/// What this process's allocator holds for it.
public enum HeapUsage {
    /// The bytes allocated and not freed: the live objects, unlike the resident size, which keeps
    /// the allocator's free space and the highest load's.
    public static var bytesInUse: Int { Int(clamping: cshims_heap_bytes_in_use()) }
}
