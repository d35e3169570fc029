// A fixture for tests/unit/test_code_grammars.py: every kind C++ has.
#define VERSION 3

namespace geo::shapes {

constexpr int kSides = 4;

template <typename T>
class Box : public Base {
 public:
  Box();
  ~Box() {}
  T get() const { return value_; }
  virtual void run() = 0;

 private:
  T value_;
};

struct Point {
  int x;
};

enum class Mode : int { kFast, kSlow };

using Alias = Box<int>;

}  // namespace geo::shapes

template <typename T>
geo::shapes::Box<T>::Box() {}

void geo::shapes::Box<int>::run() {}

int main() {
  return 0;
}
