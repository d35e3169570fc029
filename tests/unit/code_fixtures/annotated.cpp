// A fixture for tests/unit/test_code_grammars.py: C++ as large projects write it, with
// export macros before a definition and lock annotations after its parameters, which
// the grammar cannot tell from code (it reads them as a type or as a function).
namespace lamp {
namespace detail {

class Registry {
 public:
  static void Forget(const void* handle);
  void Sweep() REQUIRES(lock_) { Drop(); }
  Entry* Oldest() const REQUIRES(lock_) { return oldest_; }
  const Entry& Newest() const;
  void Lock() ACQUIRE(lock_);
  bool TryLock() const TRY_ACQUIRE(true, lock_);
};

// A lock annotation after an out-of-class definition's parameters.
void Registry::Forget(const void* handle)
    EXCLUDES(lock_) {
  MutexLock held(&lock_);
  entries()[handle].leaked = true;
}

bool Registry::IsEmpty() const EXCLUDES(lock_) {
  return entries().empty();
}

// Export macros before the return type: a pointer, a reference, a qualified type.
PUBLIC_API ReporterInterface* GetReporter() {
  static ReporterInterface* const reporter = new ConsoleReporter();
  return reporter;
}

static PUBLIC_API LookupTableInterface& GetTable() {
  static LookupTable table;
  return table;
}

PUBLIC_API std::string JoinNames(const std::vector<const char*>& names) {
  return Join(names, ", ");
}

Widget* MakeWidget() { return new Widget(); }

static Options& DefaultOptions() {
  static Options options;
  return options;
}

}  // namespace detail
}  // namespace lamp
